"""Screenshots of the release report of the embedded Adult data (issue 18),
for the README and docs/report.md: published under frequency
(l_j)-diversity with l_j = min(5, d_j) (as ``anonset demo``) and under
(t = 0.2)-closeness, each reported with the original data, and shot by
headless Chromium.

    PYTHONPATH=src python docs/report/make_screenshots.py      # needs chromium

Writes, beside this file, ``adult-l5.png`` and ``adult-t02.png`` (the verdict
and the attack simulation) and ``adult-l5-utility.png`` and
``adult-t02-utility.png`` (the first cross-tabulation and marginals), and
keeps the pages themselves in a temporary folder it prints.  A research seed
makes the releases reproducible (Adult is public data).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WIDTH = 1200
SECTIONS = {"": ("verdict", "attack"), "-utility": ("utility",)}


def publish(model_name: str, work: Path):
    import anonset
    from anonset import datasets
    df = datasets.load_adult()
    schema = datasets.adult_schema(df)
    if model_name == "l5":
        model = anonset.Diversity({a.name: min(5, a.d) for a in schema.sensitive})
    else:
        model = anonset.Closeness(0.2)
    pub = anonset.publish(df, model, schema, seed=f"adult-report-{model_name}",
                          research_seed=True)
    path = work / f"adult-{model_name}.parquet"
    pub.to_parquet(path)
    orig = work / "adult.parquet"
    if not orig.exists():
        df.to_parquet(orig)
    return path, orig


def only(html: str, keep: tuple) -> str:
    """The page with only the sections ``keep`` (sections do not nest)."""
    def drop(m):
        return m.group(0) if m.group(1) in keep else ""
    return re.sub(r'<section id="s-([a-z]+)".*?</section>', drop, html, flags=re.S)


def shoot(page: Path, png: Path, height: int) -> None:
    from PIL import Image, ImageChops
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    if chrome is None:
        sys.exit("headless Chromium is needed (Debian: apt-get install chromium)")
    subprocess.run([chrome, "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", f"--window-size={WIDTH},{height}",
                    f"--screenshot={png}", page.as_uri()], check=True, capture_output=True)
    im = Image.open(png).convert("RGB")
    bg = Image.new("RGB", im.size, (255, 255, 255))
    box = ImageChops.difference(im, bg).getbbox()        # trim the white below the content
    if box:
        im = im.crop((0, 0, WIDTH, min(im.size[1], box[3] + 24)))
    im.save(png, optimize=True)


def main() -> None:
    import anonset
    work = Path(tempfile.mkdtemp(prefix="adult-report-"))
    for name in ("l5", "t02"):
        path, orig = publish(name, work)
        page = anonset.report(path, work / f"adult-{name}.html", original=orig,
                              pairs="age:occupation,education:marital-status", seed=1)
        print(f"adult-{name}: {page.verdict}, {len(page.html.encode()) / 1024:,.0f} KiB")
        for suffix, keep in SECTIONS.items():
            part = work / f"adult-{name}{suffix}-shot.html"
            part.write_text(only(page.html, keep), encoding="utf-8")
            shoot(part, HERE / f"adult-{name}{suffix}.png", 2400)
    print(f"pages in {work}")


if __name__ == "__main__":
    main()
