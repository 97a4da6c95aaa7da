"""``anonset info`` (also ``--version``) and ``anonset keygen FILE``: build
facts, and a fresh key file for seeded or persistent-key publishing."""
from __future__ import annotations

import argparse

from . import args as A

__all__ = ["register", "VersionAction"]


def register(sub) -> None:
    p = sub.add_parser("info", help="print the version and build facts (OpenMP, threads)")
    p.set_defaults(func=cmd_info)
    p = sub.add_parser("keygen", help="write a new key file (32 random bytes, hex)",
                       description="Write 32 fresh bytes from the operating system, hex-encoded, "
                       "to a new file only its owner can read.  Use it with --key-file to make "
                       "a publication reproducible, or with --record-id for persistent keys.  "
                       "Keep it as secret as the data; an existing file is never overwritten.")
    p.add_argument("path", metavar="FILE", nargs="?", default=None, help="the new key file")
    p.add_argument("-o", "--output", dest="output", metavar="FILE", default=None,
                   help="the new key file (as FILE; the other commands' spelling)")
    p.set_defaults(func=cmd_keygen)


def cmd_info(args) -> int:
    import anonset
    anonset.show_versions()
    return A.EXIT_OK


def cmd_keygen(args) -> int:
    from ..io.keys import new_key_file
    if (args.path is None) == (args.output is None):
        raise A.UsageError("keygen: expected the new key file once, as FILE or -o FILE")
    args.path = args.path if args.path is not None else args.output
    if not str(args.path).strip() or str(args.path).endswith(("/", "\\")):
        raise A.UsageError(f"keygen: {args.path!r} names no file (a folder, or nothing); "
                           "expected the new key file's name, e.g. keys/series.key")
    try:
        new_key_file(args.path)
    except FileExistsError:
        raise A.UsageError(f"{args.path!r}: the file exists; a key file is never overwritten") \
            from None
    except OSError as e:            # no such directory, no permission, ...
        import errno
        # a read-only file system said as such, as every output's (H157)
        where = ("in a folder on a file system that is not read-only"
                 if e.errno == errno.EROFS else "in a directory you can write")
        raise A.UsageError(f"{args.path!r}: cannot be written ({e.strerror}); expected a new "
                           f"file {where}") from None
    A.note(args, f"wrote a new key to {args.path} (readable by its owner only); keep it as "
                 "secret as the data")
    return A.EXIT_OK


class VersionAction(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print the version and build facts, then exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        cmd_info(namespace)
        parser.exit(A.EXIT_OK)
