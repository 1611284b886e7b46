"""The command-line options the scripts of tools/ share; each take_ helper
removes what it reads from argv."""
import shlex


def take_mode(argv):
    """--write or --check-band, whichever argv names first (None without
    either); both removed from argv"""
    mode = next((a for a in argv if a in ("--write", "--check-band")), None)
    argv[:] = [a for a in argv if a not in ("--write", "--check-band")]
    return mode


def take_extra(argv, mode=None):
    """the OPTIONS of --extra "OPTIONS", split as a shell splits them and
    removed from argv ([] without --extra); None, with the reason printed,
    when OPTIONS are missing or when mode is --write (the stored band is of
    the files as shipped)"""
    if "--extra" not in argv:
        return []
    i = argv.index("--extra")
    if i + 1 >= len(argv):
        print("--extra: expected OPTIONS")
        return None
    extra = shlex.split(argv[i + 1])
    del argv[i:i + 2]
    if mode == "--write":
        print("--write: not with --extra (the stored band is of the files as shipped)")
        return None
    return extra


def take_fractions(argv, flag="--tolerance", count=None):
    """the comma-separated fractions after flag (--tolerance A,B,...) as a
    tuple, removed from argv; None without flag; () when they are not
    numbers, or not count of them where count is given"""
    if flag not in argv:
        return None
    i = argv.index(flag)
    try:
        t = tuple(float(v) for v in argv[i + 1].split(","))
    except (IndexError, ValueError):
        t = ()
    del argv[i:i + 2]
    return t if count is None or len(t) == count else ()
