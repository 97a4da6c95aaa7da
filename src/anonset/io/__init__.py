"""Files and execution paths: atomic writes (:mod:`.atomic`), generator keys
(:mod:`.keys`), files larger than memory (:mod:`.stream`) and Dask
(:mod:`.dask`)."""
