#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Read the `detections` PDUs of gpuradar.cfar_2d / cfar_1d as plain Python objects.

A PDU is a pmt pair (metadata dict, vector of detection dicts). pmt.to_python cannot be
applied to the pair itself (a non-empty pmt pair also passes pmt.is_dict), so the two
halves are converted here::

    from gnuradio.gpuradar import detections
    meta, dets = detections.pdu_to_python(msg)
    for d in dets:
        print(d["range_bin"], d["doppler_bin"], d.get("range_m"), d.get("velocity_mps"))

Detection keys: range_bin, doppler_bin, channel, cpi (int), power, threshold, noise,
snr_db (float); range_m, velocity_mps (float) and rx_time ((int, float)) when the cpi
tag allowed them; item (int) from cfar_1d.
"""

import pmt


def _value(p):
    """pmt -> Python, recursively (dicts with str keys, vectors as lists)."""
    if pmt.is_symbol(p):
        return pmt.symbol_to_string(p)
    if pmt.is_bool(p):
        return pmt.to_bool(p)
    if pmt.is_uint64(p):
        return int(pmt.to_uint64(p))
    if pmt.is_integer(p):
        return int(pmt.to_long(p))
    if pmt.is_real(p):
        return float(pmt.to_double(p))
    if pmt.is_tuple(p):
        return tuple(_value(pmt.tuple_ref(p, i)) for i in range(pmt.length(p)))
    if pmt.is_vector(p):
        return [_value(pmt.vector_ref(p, i)) for i in range(pmt.length(p))]
    if pmt.is_null(p):
        return None
    if pmt.is_dict(p):
        items = pmt.dict_items(p)
        out = {}
        for i in range(pmt.length(items)):
            kv = pmt.nth(i, items)
            out[_value(pmt.car(kv))] = _value(pmt.cdr(kv))
        return out
    return pmt.to_python(p)


def pdu_to_python(msg):
    """(metadata dict, list of detection dicts) of one detections PDU."""
    if not pmt.is_pair(msg) or not pmt.is_vector(pmt.cdr(msg)):
        raise ValueError("not a gpuradar detections PDU (pair of dict and vector)")
    return _value(pmt.car(msg)), _value(pmt.cdr(msg))


def pdu_to_dicts(msg):
    """The detections of one PDU as a list of plain dicts."""
    return pdu_to_python(msg)[1]


def pdu_metadata(msg):
    """The metadata dict of one PDU (the cpi tag's fields, e.g. nonfinite_samples, the
    NaN/Inf input samples the framer wrote as 0; cpi, found, nonfinite (NaN/Inf cells),
    ...)."""
    return pdu_to_python(msg)[0]


def collect(message_debug_block):
    """All detections stored by a blocks.message_debug ('store' port), in order."""
    out = []
    for i in range(message_debug_block.num_messages()):
        out.extend(pdu_to_dicts(message_debug_block.get_message(i)))
    return out
