#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Writes the small recordings the offline GRC examples read (used by their ctest runs).

  make_recordings.py <out-dir>

<out-dir>/pulse_doppler.sigmf-data/.sigmf-meta: gnuradio.gpuradar.pd_sim's recording
(radar_scene_source, first sample = start of pulse 0) of the scenario of
examples/pulse_doppler_offline.grc's variables: fs 2 MHz, fc 10 GHz, PRI 1000 samples,
LFM 1 MHz / 10 us, gate 512 samples from 100, two targets (gate bins 100 and 300;
Doppler bins +6 and -10 of 32), NCPI CPIs of 32 pulses.
<out-dir>/sar.sigmf-data/.sigmf-meta/.geometry.f64: gnuradio.gpuradar.sar_sim's default
spotlight scenario (examples/sar_offline.grc's variables).
"""

import os
import sys

from gnuradio.gpuradar import pd_sim, sar_sim

C = pd_sim.SPEED_OF_LIGHT
FS, FC, PRI, NPULSES, NFFT = 2e6, 10e9, 1000, 32, 32
BANDWIDTH, PULSE_WIDTH = 1e6, 10e-6
GATE_START, NRANGE = 100, 512
NCPI = 4
DOPPLER_BIN_MPS = FS / PRI / NFFT * C / (2 * FC)
RANGES = [200 * C / (2 * FS) + 1.0, 400 * C / (2 * FS) + 1.0]
VELOCITIES = [6 * DOPPLER_BIN_MPS, -10 * DOPPLER_BIN_MPS]
SNR_DB = [0.0, -3.0]
SEED = 7
SAR_NPULSES, SAR_NBINS = 256, 512


def pulse_doppler(base):
    sc = pd_sim.Scenario(fs=FS, fc=FC, pri_samples=PRI, bandwidth=BANDWIDTH,
                         pulse_width=PULSE_WIDTH, gate_start=GATE_START, nrange=NRANGE,
                         npulses=NPULSES, ncpi=NCPI, noise_power=1.0, seed=SEED,
                         targets=[pd_sim.Target(r, v, s)
                                  for r, v, s in zip(RANGES, VELOCITIES, SNR_DB)])
    pd_sim.simulate(sc, base)


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
