#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The SigMF pieces shared by the recording modules (pd_sim, sar_sim): file suffixes, the
``gpuradar`` extension namespace, the recording prefix of a file name, the metadata
file's common ``global`` fields and writer, and the defensive reading every recording
goes through:

- ``read_meta``: the metadata must be a regular file of bounded size holding standard
  JSON (no NaN/Infinity) nested at most ``MAX_JSON_DEPTH`` deep;
- ``Fields``: typed access to one JSON object's fields (numbers finite and in range,
  booleans real JSON booleans, strings, objects, lists), every failure a
  ``RecordingError`` naming the file and the field; values given on the command line
  (overrides) replace fields and are named by their option;
- ``data_file`` / ``side_file``: the data and side files must be regular files, side files
  named relative to the recording (no absolute path, no ``..``).

The formats themselves are described in pd_sim and sar_sim."""

import contextlib
import json
import math
import os
import stat

import numpy as np

DATA_SUFFIX = ".sigmf-data"
META_SUFFIX = ".sigmf-meta"
#: SigMF extension namespace of the gpuradar fields.
NAMESPACE = "gpuradar"
NS = NAMESPACE + ":"
#: Largest metadata file read (bytes): the truth of ~10^5 target x CPI annotations.
MAX_META_BYTES = 64 << 20
#: Deepest JSON nesting accepted (the formats need 4).
MAX_JSON_DEPTH = 32
#: Relative tolerance of fields that must agree (sample rates, PRF and PRI).
AGREE_RTOL = 1e-9


class RecordingError(ValueError):
    """A recording that cannot be used; the message names the file and the field."""


#: Sample formats a reader may accept (SigMF ``core:datatype``): bytes per complex
#: sample, numpy dtype of one component, and the component value that reads as 1.0.
#: Integer samples become complex64 with 1.0 = full scale (ci16: 32768 -> 1.0), the
#: convention of GNU Radio's sc16 -> fc32 conversion (UHD's cpu format fc32).
SAMPLE_FORMATS = {
    "cf32_le": (8, "<f4", 1.0),
    "ci16_le": (4, "<i2", 32768.0),
    "ci8": (2, "i1", 128.0),
}


def sample_bytes(datatype):
    """Bytes per complex sample of a datatype of SAMPLE_FORMATS."""
    return SAMPLE_FORMATS[datatype][0]


def to_complex64(raw, datatype, out=None):
    """Complex64 samples of the interleaved components `raw` (numpy array of the
    datatype's component dtype, 2 per sample), scaled so that full scale is 1.0; written
    into `out` (a complex64 array of len(raw) // 2) when given."""
    _, component, full_scale = SAMPLE_FORMATS[datatype]
    raw = np.asarray(raw, dtype=component)
    if out is None:
        out = np.empty(raw.size // 2, dtype=np.complex64)
    if datatype == "cf32_le":
        out[...] = raw.view("<c8")
        return out
    pairs = raw.reshape(-1, 2).astype(np.float32)
    pairs *= np.float32(1.0 / full_scale)
    out.real = pairs[:, 0]
    out.imag = pairs[:, 1]
    return out


def from_complex64(samples, datatype, full_scale=1.0):
    """The interleaved components of complex `samples` in a datatype of SAMPLE_FORMATS
    (numpy array of its component dtype) and the number of samples clipped. Integer
    datatypes quantise with full_scale (> 0) read back as 1.0: a component x becomes
    round(x / full_scale * S) (S = 32768 for ci16_le, 128 for ci8), clipped to the
    integer range (NaN written as 0); a sample counts as clipped when either component
    is. cf32_le keeps the values (full_scale unused)."""
    _, component, scale = SAMPLE_FORMATS[datatype]
    samples = np.asarray(samples, dtype=np.complex64)
    if datatype == "cf32_le":
        return samples.view("<f4").copy(), 0
    if not (full_scale > 0 and math.isfinite(full_scale)):
        raise ValueError(f"full_scale must be a finite number > 0 (got {full_scale!r})")
    info = np.iinfo(component)
    pairs = samples.view(np.float32).reshape(-1, 2).astype(np.float64)
    pairs *= scale / full_scale
    np.rint(pairs, out=pairs)
    over = (pairs < info.min) | (pairs > info.max) | np.isnan(pairs)
    pairs[np.isnan(pairs)] = 0.0  # counted with the clipped: no integer stands for NaN
    np.clip(pairs, info.min, info.max, out=pairs)
    return pairs.astype(component).reshape(-1), int(np.count_nonzero(over.any(axis=1)))


def peak_component(samples):
    """The largest |component| of complex `samples` over the finite ones (0.0 when
    none): the full scale at which an integer recording of them clips nothing."""
    parts = np.abs(np.asarray(samples, dtype=np.complex64).view(np.float32))
    parts = parts[np.isfinite(parts)]
    return float(parts.max()) if parts.size else 0.0


def unclipped_full_scale(samples, datatype):
    """The smallest full scale at which `samples` quantise to `datatype` without
    clipping: the largest component maps to the integers' largest positive value
    (32767, 127), one step below the full scale (32768, 128) that reads as 1.0. 1.0 when
    every sample is zero or non-finite."""
    peak = peak_component(samples)
    scale = SAMPLE_FORMATS[datatype][2]
    return peak * scale / (scale - 1) if peak > 0 else 1.0


def quantise_file(src, dst, datatype, full_scale=None, chunk=1 << 20):
    """Writes the cf32_le file src to dst in an integer datatype of SAMPLE_FORMATS,
    `chunk` samples at a time (a recording larger than memory). full_scale (> 0) reads
    back as 1.0; None: unclipped_full_scale of the whole file (nothing clips). Returns
    (full_scale, samples clipped); a failed write is a WriteError naming dst."""
    data = np.memmap(src, dtype="<c8", mode="r") if os.path.getsize(src) else \
        np.zeros(0, np.complex64)
    if full_scale is None:
        full_scale = max((unclipped_full_scale(data[i:i + chunk], datatype)
                          for i in range(0, data.size, chunk)), default=1.0)
    clipped = 0
    with naming_write_errors(dst), open(dst, "wb") as f:
        for i in range(0, data.size, chunk):
            raw, n = from_complex64(data[i:i + chunk], datatype, full_scale)
            clipped += n
            f.write(memoryview(raw).cast("B"))
    return float(full_scale), clipped


def _integer_converters():
    """GNU Radio's converter of each integer datatype's interleaved components to
    complex (scaled so that full scale reads as 1.0): {datatype: (item size, factory of
    the scale)}."""
    from gnuradio import blocks, gr
    return {
        "ci16_le": (gr.sizeof_short,
                    lambda scale: blocks.interleaved_short_to_complex(False, False, scale)),
        "ci8": (gr.sizeof_char,
                lambda scale: blocks.interleaved_char_to_complex(False, scale)),
    }


def complex_file_source(tb, path, datatype, vlen):
    """A flowgraph source of a recording's samples as complex vectors of vlen (one pulse
    per item): blocks.file_source, and for an integer datatype GNU Radio's interleaved
    integer -> complex conversion (1.0 = full scale, SAMPLE_FORMATS) and
    stream_to_vector. Returns the last block (connect it to the consumer); tb: the
    top_block to connect the pieces in."""
    from gnuradio import blocks, gr
    if datatype == "cf32_le":
        return blocks.file_source(gr.sizeof_gr_complex * vlen, path, False)
    size, converter = _integer_converters()[datatype]
    src = blocks.file_source(size, path, False)
    conv = converter(SAMPLE_FORMATS[datatype][2])
    s2v = blocks.stream_to_vector(gr.sizeof_gr_complex, vlen)
    tb.connect(src, conv, s2v)
    return s2v


_MISSING = object()


def base_of(path, extra_suffixes=()):
    """The recording prefix of any of its files (or of the prefix itself)."""
    path = str(path)
    for suffix in (META_SUFFIX, DATA_SUFFIX) + tuple(extra_suffixes):
        if path.endswith(suffix):
            return path[:-len(suffix)]
    return path


def global_fields(sample_rate, description, recorder):
    """The core fields of a cf32_le recording's ``global`` object and the gpuradar
    extension declaration (the caller adds its gpuradar: fields)."""
    return {
        "core:datatype": "cf32_le",
        "core:version": "1.0.0",
        "core:sample_rate": sample_rate,
        "core:description": description,
        "core:recorder": recorder,
        "core:extensions": [{"name": NAMESPACE, "version": "1.0.0", "optional": True}],
    }


class WriteError(OSError):
    """Writing a recording failed (disk full, file too large, I/O error); filename is
    the file."""


@contextlib.contextmanager
def naming_write_errors(path):
    """Turns an OSError raised while writing path into a WriteError naming path (a
    failed write() on an open file, numpy's tofile, matplotlib's savefig name no file)."""
    try:
        yield
    except OSError as e:
        raise WriteError(e.errno, e.strerror or str(e), str(path)) from None


def write_file(path, data):
    """Writes a bytes-like object (a numpy array: its bytes) to path; a failure is a
    WriteError naming the file."""
    with naming_write_errors(path), open(path, "wb") as f:
        f.write(memoryview(data).cast("B"))


def write_meta(base, global_, captures, annotations, indent):
    """Writes <base>.sigmf-meta: {global, captures, annotations} as standard JSON (a
    non-finite number is a ValueError, never written as NaN)."""
    meta = {"global": global_, "captures": captures, "annotations": list(annotations)}
    text = json.dumps(meta, indent=indent, allow_nan=False)
    write_file(str(base) + META_SUFFIX, text.encode())


def _open_regular(path, what, missing_hint=""):
    """Opens path for reading without blocking (a FIFO must not hang the reader) and
    checks it is a regular file; returns (file object, size)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise RecordingError(f"{path}: no such file{missing_hint}") from None
    except IsADirectoryError:
        raise RecordingError(f"{path}: is a directory, not {what}") from None
    except OSError as e:
        raise RecordingError(f"{path}: cannot read ({e.strerror})") from None
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        os.close(fd)
        raise RecordingError(f"{path}: is a directory, not {what}")
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise RecordingError(f"{path}: not a regular file (a device, FIFO or socket), not "
                             f"{what}")
    return os.fdopen(fd, "rb"), st.st_size


def _reject_constant(name):
    raise ValueError(f"{name} is not standard JSON")


def _depth(value):
    """Nesting depth of a parsed JSON value (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if d > MAX_JSON_DEPTH:
                return d
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def parse_json(text, path):
    """Standard JSON of a metadata file (bytes, UTF-8), nested at most MAX_JSON_DEPTH."""
    try:
        value = json.loads(text.decode("utf-8"), parse_constant=_reject_constant)
    except RecursionError:
        raise RecordingError(f"{path}: not valid SigMF JSON (nested more than "
                             f"{MAX_JSON_DEPTH} deep)") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise RecordingError(f"{path}: not valid SigMF JSON ({e})") from None
    if _depth(value) > MAX_JSON_DEPTH:
        raise RecordingError(f"{path}: not valid SigMF JSON (nested more than "
                             f"{MAX_JSON_DEPTH} deep)")
    return value


def read_meta(path, max_bytes=MAX_META_BYTES):
    """The metadata object of <base>.sigmf-meta: a regular file of at most max_bytes,
    standard JSON, an object with a ``global`` object."""
    f, size = _open_regular(path, "a SigMF metadata file",
                            f" (expected a SigMF recording <base>{META_SUFFIX} + "
                            f"<base>{DATA_SUFFIX})")
    with f:
        if size > max_bytes:
            raise RecordingError(f"{path}: {size} bytes, larger than the {max_bytes} bytes "
                                 f"a SigMF metadata file may have here")
        try:
            text = f.read(max_bytes + 1)
        except OSError as e:
            raise RecordingError(f"{path}: cannot read ({e.strerror})") from None
    if len(text) > max_bytes:
        raise RecordingError(f"{path}: larger than the {max_bytes} bytes a SigMF metadata "
                             f"file may have here")
    meta = parse_json(text, path)
    if not isinstance(meta, dict) or not isinstance(meta.get("global"), dict):
        raise RecordingError(f"{path}: metadata field 'global' is missing or not an object "
                             f"(not a SigMF metadata file)")
    return meta


def data_file(path, meta_path, what="SigMF data"):
    """Size (bytes) of a recording's data or side file, after checking it is a readable
    regular file."""
    f, size = _open_regular(path, what, f" (the {what} of {meta_path})")
    with f:
        try:
            f.read(1)
        except OSError as e:
            raise RecordingError(f"{path}: cannot read ({e.strerror})") from None
    return size


def side_file(base, name, field, meta_path):
    """The path of a side file a metadata field names: relative to the recording's
    directory, never absolute and never through '..' (a recording may come from anyone)."""
    if not isinstance(name, str) or not name:
        raise RecordingError(f"{meta_path}: metadata field '{field}' must be a file name "
                             f"(got {name!r})")
    parts = name.replace("\\", "/").split("/")
    if os.path.isabs(name) or name.startswith("/") or ".." in parts or "\0" in name:
        raise RecordingError(f"{meta_path}: metadata field '{field}' must name a file "
                             f"beside the recording, without an absolute path or '..' "
                             f"(got {name!r})")
    return os.path.join(os.path.dirname(str(base)), name)


def agree(a, b, rtol=AGREE_RTOL):
    """Whether two positive quantities agree to rtol."""
    return abs(a - b) <= rtol * max(abs(a), abs(b))


class Fields:
    """Typed access to the fields of one metadata object.

    ``where`` is the object's place in the file ("global", "annotations[3]", ...), used in
    messages: ``<file>: metadata field 'global.gpuradar:nrange' must be ...``.
    ``overrides`` maps a field name to (option, value): a value given on the command line,
    used instead of the field and named by its option in messages.
    """

    def __init__(self, obj, path, where, overrides=None, options=None):
        if not isinstance(obj, dict):
            raise RecordingError(f"{path}: metadata field '{where}' must be an object "
                                 f"(got {_short(obj)})")
        self.obj, self.path, self.where = obj, path, where
        self.overrides = dict(overrides or {})
        #: field -> the command-line option that can give it (named when it is missing)
        self.options = dict(options or {})

    def name(self, key):
        if key in self.overrides:
            return self.overrides[key][0]
        return f"metadata field '{self.where}.{key}'"

    def error(self, key, message):
        return RecordingError(f"{self.path}: {self.name(key)} {message}")

    def has(self, key):
        return key in self.overrides or key in self.obj

    def raw(self, key, default=_MISSING):
        if key in self.overrides:
            return self.overrides[key][1]
        if key in self.obj:
            return self.obj[key]
        if default is _MISSING:
            hint = f" (or give {self.options[key]})" if key in self.options else ""
            raise self.error(key, "is missing" + hint)
        return default

    def _value(self, key, default, ok, what):
        """The field's value checked by ok() (`must be <what>` otherwise), or default,
        returned as is, when the field is absent."""
        v = self.raw(key, default)
        if default is not _MISSING and v is default:
            return v
        if not ok(v):
            raise self.error(key, f"must be {what} (got {_short(v)})")
        return v

    def number(self, key, kind=float, above=None, minimum=None, maximum=None,
               default=_MISSING):
        """A finite JSON number (kind int: a whole one) with optional bounds."""
        v = self._value(key, default, _finite,
                        f"a finite number of at most {MAX_MAGNITUDE:g}")
        if default is not _MISSING and v is default:
            return v
        if kind is int:
            if v != math.floor(v):
                raise self.error(key, f"must be a whole number (got {v!r})")
            v = int(v)
        if above is not None and not v > above:
            raise self.error(key, f"must be > {above} (got {v!r})")
        if minimum is not None and v < minimum:
            raise self.error(key, f"must be >= {minimum} (got {v!r})")
        if maximum is not None and v > maximum:
            raise self.error(key, f"must be <= {maximum} (got {v!r})")
        return kind(v)

    def boolean(self, key, default=_MISSING):
        """A JSON boolean (true/false; "no", 0 and null are errors)."""
        return self._value(key, default, lambda v: isinstance(v, bool), "true or false")

    def string(self, key, choices=None, default=_MISSING):
        v = self._value(key, default, lambda v: isinstance(v, str), "a string")
        if choices is not None and v not in choices:
            raise self.error(key, f"must be one of {', '.join(choices)} (got {v!r})")
        return v

    def object(self, key, default=_MISSING):
        """The field as a Fields of its own (it must be a JSON object)."""
        v = self._value(key, default, lambda v: isinstance(v, dict), "an object")
        if default is not _MISSING and v is default:
            return v
        return Fields(v, self.path, f"{self.where}.{key}", options=self.options)

    def array(self, key, default=_MISSING, max_length=None):
        v = self._value(key, default, lambda v: isinstance(v, list), "a list")
        if max_length is not None and isinstance(v, list) and len(v) > max_length:
            raise self.error(key, f"must have at most {max_length} entries (got {len(v)})")
        return v

    def numbers(self, key, length, default=_MISSING):
        """A list of `length` finite numbers, as floats."""
        v = self.array(key, default)
        if v is default and default is not _MISSING:
            return default
        if len(v) != length or not all(_finite(x) for x in v):
            raise self.error(key, f"must be a list of {length} finite numbers "
                                  f"(got {_short(v)})")
        return [float(x) for x in v]


#: Largest magnitude of a metadata number (a JSON integer may be arbitrarily long).
MAX_MAGNITUDE = 1e300


def annotations_with(meta, path, key):
    """Fields of each annotation holding `key` (others are not ours), in file order."""
    annotations = meta.get("annotations", [])
    if not isinstance(annotations, list):
        raise RecordingError(f"{path}: metadata field 'annotations' must be a list")
    return [Fields(a, path, f"annotations[{i}]") for i, a in enumerate(annotations)
            if isinstance(a, dict) and key in a]


def _finite(x):
    """A JSON number (not a boolean), finite and of magnitude <= MAX_MAGNITUDE."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    return abs(x) <= MAX_MAGNITUDE  # False for NaN; an int is compared exactly


def _short(v, limit=60):
    """repr of a value, cut to `limit` characters for one-line messages."""
    text = repr(v)
    return text if len(text) <= limit else text[:limit - 3] + "..."
