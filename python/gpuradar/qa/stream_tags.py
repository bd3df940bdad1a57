#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Stream tags the QA feeds into blocks through vector sources."""

import pmt
from gnuradio import gr


def rate_tags(rates):
    """rx_rate tags (as UHD, Soapy and osmosdr sources stamp them) at (offset, samples/s)
    pairs."""
    tags = []
    for offset, rate in rates:
        t = gr.tag_t()
        t.offset, t.key, t.value = offset, pmt.intern("rx_rate"), pmt.from_double(rate)
        tags.append(t)
    return tags
