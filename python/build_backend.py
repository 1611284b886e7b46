"""A PEP 517 build backend in the standard library alone, so that
`pip install ./python` needs nothing from an index (no setuptools, no
wheel): it zips the pure-Python package simtrain into a wheel."""
import base64
import hashlib
import os
import zipfile

NAME, VERSION = "simtrain", "0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))
DIST_INFO = "%s-%s.dist-info" % (NAME, VERSION)
METADATA = """Metadata-Version: 2.1
Name: %s
Version: %s
Summary: Python bindings of sim, the discrete-event simulator of large-model training (libsim's C API)
Requires-Python: >=3.9
Provides-Extra: pandas
Requires-Dist: pandas; extra == "pandas"
""" % (NAME, VERSION)
WHEEL = """Wheel-Version: 1.0
Generator: simtrain build_backend
Root-Is-Purelib: true
Tag: py3-none-any
"""


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _files():
    """the package's files, relative to python/, sorted"""
    out = []
    for root, _, names in os.walk(os.path.join(HERE, NAME)):
        for n in names:
            if n.endswith(".py"):
                out.append(os.path.relpath(os.path.join(root, n), HERE))
    return sorted(out)


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        entries = [(f.replace(os.sep, "/"), open(os.path.join(HERE, f), "rb").read()) for f in _files()]
        entries += [(DIST_INFO + "/METADATA", METADATA.encode()), (DIST_INFO + "/WHEEL", WHEEL.encode())]
        for arcname, data in entries:
            z.writestr(arcname, data)
            record.append(_record_line(arcname, data))
        record.append(DIST_INFO + "/RECORD,,")
        z.writestr(DIST_INFO + "/RECORD", "\n".join(record) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    name = "%s-%s" % (NAME, VERSION)
    path = os.path.join(sdist_directory, name + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for f in _files() + ["pyproject.toml", "build_backend.py"]:
            t.add(os.path.join(HERE, f), arcname=name + "/" + f)
        info = tarfile.TarInfo(name + "/PKG-INFO")
        data = METADATA.encode()
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return os.path.basename(path)
