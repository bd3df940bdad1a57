#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Writes the small recordings the offline GRC examples read (used by their ctest runs).

  make_recordings.py <out-dir>

<out-dir>/pulse_doppler.sigmf-data/.sigmf-meta: cf32_le samples of radar_scene_source
(free-running, first sample = start of pulse 0) with the scenario of
examples/pulse_doppler_offline.grc's variables: fs 2 MHz, fc 10 GHz, PRI 1000 samples,
LFM 1 MHz / 10 us, two targets (gate bins 100 and 300 with gate start 100; Doppler bins
+6 and -10 of 32), NCPI CPIs of 32 pulses.
<out-dir>/sar.sigmf-data/.sigmf-meta/.geometry.f64: gnuradio.gpuradar.sar_sim's default
spotlight scenario (examples/sar_offline.grc's variables).
"""

import json
import os
import sys

from gnuradio import blocks, gr
from gnuradio import gpuradar
from gnuradio.gpuradar import sar_sim

C = 299792458.0
FS, FC, PRI, NPULSES, NFFT = 2e6, 10e9, 1000, 32, 32
BANDWIDTH, PULSE_WIDTH = 1e6, 10e-6
NCPI = 4
DOPPLER_BIN_MPS = FS / PRI / NFFT * C / (2 * FC)
RANGES = [200 * C / (2 * FS) + 1.0, 400 * C / (2 * FS) + 1.0]
VELOCITIES = [6 * DOPPLER_BIN_MPS, -10 * DOPPLER_BIN_MPS]
SNR_DB = [0.0, -3.0]
SAR_NPULSES, SAR_NBINS = 256, 512


def pulse_doppler(base):
    tb = gr.top_block()
    scene = gpuradar.radar_scene_source(FS, FC, FS / PRI, BANDWIDTH, PULSE_WIDTH, [], RANGES,
                                        VELOCITIES, SNR_DB, "snr_db", 0.0, 1.0, 0.0, 0.0,
                                        0.0, 0.0, False, 0, 0.0, 7)
    head = blocks.head(gr.sizeof_gr_complex, NCPI * NPULSES * PRI)
    sink = blocks.file_sink(gr.sizeof_gr_complex, base + ".sigmf-data", False)
    sink.set_unbuffered(False)
    tb.connect(scene, head, sink)
    tb.run()
    sink.close()
    meta = {
        "global": {
            "core:datatype": "cf32_le", "core:version": "1.0.0", "core:sample_rate": FS,
            "core:description": "gr-gpuradar radar_scene_source, first sample = pulse 0",
            "core:recorder": "gr-gpuradar examples/make_recordings.py",
            "gpuradar:pri_samples": PRI, "gpuradar:prf": FS / PRI, "gpuradar:fc": FC,
            "gpuradar:bandwidth": BANDWIDTH, "gpuradar:pulse_width": PULSE_WIDTH,
            "gpuradar:npulses": NPULSES,
        },
        "captures": [{"core:sample_start": 0, "core:frequency": FC}],
        "annotations": [
            {"core:sample_start": 0, "core:sample_count": NCPI * NPULSES * PRI,
             "core:label": f"target {i}", "gpuradar:range_m": r, "gpuradar:velocity_mps": v,
             "gpuradar:snr_db": s}
            for i, (r, v, s) in enumerate(zip(RANGES, VELOCITIES, SNR_DB))],
    }
    with open(base + ".sigmf-meta", "w") as f:
        json.dump(meta, f, indent=2)


def sar(base):
    sar_sim.write(base, sar_sim.scenario("spotlight", npulses=SAR_NPULSES, nbins=SAR_NBINS))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    pulse_doppler(os.path.join(out, "pulse_doppler"))
    sar(os.path.join(out, "sar"))
    print(f"recordings written to {out}")


if __name__ == "__main__":
    main()
