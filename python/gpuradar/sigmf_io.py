#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The SigMF pieces shared by the recording modules (pd_sim, sar_sim): file suffixes, the
``gpuradar`` extension namespace, the recording prefix of a file name and the metadata
file's common ``global`` fields and writer. The formats themselves are described in
pd_sim and sar_sim."""

import json

DATA_SUFFIX = ".sigmf-data"
META_SUFFIX = ".sigmf-meta"
#: SigMF extension namespace of the gpuradar fields.
NAMESPACE = "gpuradar"
NS = NAMESPACE + ":"


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


def write_meta(base, global_, captures, annotations, indent):
    """Writes <base>.sigmf-meta: {global, captures, annotations}."""
    meta = {"global": global_, "captures": captures, "annotations": list(annotations)}
    with open(str(base) + META_SUFFIX, "w") as f:
        json.dump(meta, f, indent=indent)
