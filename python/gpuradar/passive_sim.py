#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Passive radar scenes: an illuminator of opportunity, a reference channel and one or
more surveillance channels (passive_scene_source, and simulate() for tests and apps).

Signal model (complex baseband at fs, every level relative to unit noise power per
sample in each channel, each channel's noise independent):

- illuminator x[n], unit power: ``fm`` (an FM broadcast: a Gaussian "programme" low-pass
  filtered to audio_bandwidth_hz, of unit RMS, frequency-modulating the carrier with an
  RMS deviation of deviation_hz) or ``ofdm`` (DVB-T-like: symbols of ofdm_fft samples,
  ofdm_used occupied subcarriers around DC (DC itself empty) with random QPSK, a cyclic
  prefix of ofdm_cp samples);
- reference channel: sqrt(10^(ref_snr_db/10)) x[n] + noise;
- surveillance channel k (k = 0 .. nsurv-1, a uniform line array of half-wavelength
  spacing: a wave from azimuth a reaches channel k with phase exp(j pi k sin a)):
  the direct path sqrt(10^(dpi_db/10)) x[n] from dpi_azimuth_deg; static clutter: scatterers
  at zero Doppler, delays 1..clutter_max_delay samples (uniform; all different while
  clutter_count <= clutter_max_delay), random azimuths,
  complex Gaussian amplitudes whose powers sum to 10^(clutter_cnr_db/10); targets:
  sqrt(10^(snr_db/10)) x[n - d] exp(j 2 pi f_D n / fs) from their azimuth; and noise.

A target's bistatic range R (m) is the echo path minus the direct (baseline) path; its
echo is delayed by d = round(R fs / c) samples (no fractional delay: the truth reports
the range of the delay used). Its bistatic velocity v (m/s) is the rate at which R
shrinks (closing positive, as the module's range-Doppler maps): Doppler f_D = v fc / c.
Targets keep their delay over the run (no range walk: at a few hundred m/s a range bin
of c / fs, 125 m at 2.4 Msps, takes about a second to cross).

Truth: every truth_every samples (at sample 0, truth_every, ...), one dict per target:
target, sample, range_m and bistatic_range_m (the delay's range), requested_range_m,
velocity_mps (bistatic, closing positive), doppler_hz, delay_samples, snr_db,
azimuth_deg, fs, fc (range_m and velocity_mps as the range-Doppler display's truth input
reads them).
"""

import math
from dataclasses import dataclass, field
from typing import List

import numpy as np
import pmt
from gnuradio import gr

from . import scene_truth

SPEED_OF_LIGHT = scene_truth.SPEED_OF_LIGHT
ILLUMINATORS = ("fm", "ofdm")
#: Longest delay (samples) a target or clutter may have: the history kept per channel.
MAX_DELAY = 1 << 20
#: Taps of the FM programme's low-pass filter (windowed sinc).
FM_PROGRAMME_TAPS = 129


@dataclass
class PassiveScene:
    """A passive radar scene (SI units; see the module)."""
    fs: float = 2.4e6
    fc: float = 98e6
    illuminator: str = "fm"
    nsurv: int = 1
    ref_snr_db: float = 40.0
    dpi_db: float = 60.0
    dpi_azimuth_deg: float = -60.0
    clutter_count: int = 0
    clutter_max_delay: int = 50
    clutter_cnr_db: float = 40.0
    ranges_m: List[float] = field(default_factory=list)
    velocities_mps: List[float] = field(default_factory=list)
    snr_db: List[float] = field(default_factory=list)
    azimuths_deg: List[float] = field(default_factory=list)
    deviation_hz: float = 75e3
    audio_bandwidth_hz: float = 15e3
    ofdm_fft: int = 2048
    ofdm_used: int = 1705
    ofdm_cp: int = 512
    truth_every: int = 1 << 20
    seed: int = 1

    def check(self):
        """ValueError naming the first bad parameter and its allowed range."""
        def positive(name, value):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0 (got {value!r})")
        positive("fs", self.fs)
        positive("fc", self.fc)
        if self.illuminator not in ILLUMINATORS:
            raise ValueError(f"illuminator must be one of {', '.join(ILLUMINATORS)} "
                             f"(got {self.illuminator!r})")
        if not 1 <= int(self.nsurv) <= 64:
            raise ValueError(f"nsurv must be in [1, 64] surveillance channels "
                             f"(got {self.nsurv!r})")
        for name in ("ref_snr_db", "dpi_db", "dpi_azimuth_deg", "clutter_cnr_db"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be finite (got {getattr(self, name)!r})")
        if not -90.0 <= self.dpi_azimuth_deg <= 90.0:
            raise ValueError(f"dpi_azimuth_deg must be in [-90, 90] (got "
                             f"{self.dpi_azimuth_deg!r})")
        if not 0 <= int(self.clutter_count) <= 10000:
            raise ValueError(f"clutter_count must be in [0, 10000] (got "
                             f"{self.clutter_count!r})")
        if not 1 <= int(self.clutter_max_delay) <= MAX_DELAY:
            raise ValueError(f"clutter_max_delay must be in [1, {MAX_DELAY}] samples "
                             f"(got {self.clutter_max_delay!r})")
        n = len(self.ranges_m)
        for name in ("velocities_mps", "snr_db"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} must have one value per target: "
                                 f"{len(getattr(self, name))} values for {n} ranges_m")
        if self.azimuths_deg and len(self.azimuths_deg) != n:
            raise ValueError(f"azimuths_deg must be empty (all 0) or have one value per "
                             f"target: {len(self.azimuths_deg)} values for {n} ranges_m")
        max_range = MAX_DELAY * SPEED_OF_LIGHT / self.fs
        for i, r in enumerate(self.ranges_m):
            if not (math.isfinite(r) and 0 < r <= max_range):
                raise ValueError(f"ranges_m[{i}] must be in (0, {max_range:.6g}] m "
                                 f"(bistatic; {MAX_DELAY} samples at fs) (got {r!r})")
        for name in ("velocities_mps", "snr_db"):
            for i, v in enumerate(getattr(self, name)):
                if not math.isfinite(v):
                    raise ValueError(f"{name}[{i}] must be finite (got {v!r})")
        for i, a in enumerate(self.azimuths_deg):
            if not (math.isfinite(a) and -90.0 <= a <= 90.0):
                raise ValueError(f"azimuths_deg[{i}] must be in [-90, 90] (got {a!r})")
        if self.illuminator == "fm":
            positive("deviation_hz", self.deviation_hz)
            if not (math.isfinite(self.audio_bandwidth_hz) and
                    0 < self.audio_bandwidth_hz < self.fs / 2):
                raise ValueError(f"audio_bandwidth_hz must be in (0, fs/2 = "
                                 f"{self.fs / 2:g}) Hz (got {self.audio_bandwidth_hz!r})")
        else:
            if not 8 <= int(self.ofdm_fft) <= 1 << 16:
                raise ValueError(f"ofdm_fft must be in [8, 65536] (got {self.ofdm_fft!r})")
            if not 2 <= int(self.ofdm_used) < int(self.ofdm_fft):
                raise ValueError(f"ofdm_used must be in [2, ofdm_fft - 1 = "
                                 f"{int(self.ofdm_fft) - 1}] (got {self.ofdm_used!r})")
            if not 0 <= int(self.ofdm_cp) <= int(self.ofdm_fft):
                raise ValueError(f"ofdm_cp must be in [0, ofdm_fft = {int(self.ofdm_fft)}] "
                                 f"(got {self.ofdm_cp!r})")
        if int(self.truth_every) < 1:
            raise ValueError(f"truth_every must be >= 1 sample (got {self.truth_every!r})")
        if not 0 <= int(self.seed) < 2 ** 63:
            raise ValueError(f"seed must be in [0, 2^63) (got {self.seed!r})")

    def delay_samples(self, i):
        return int(round(self.ranges_m[i] * self.fs / SPEED_OF_LIGHT))

    def doppler_hz(self, i):
        return self.velocities_mps[i] * self.fc / SPEED_OF_LIGHT

    def azimuth_deg(self, i):
        return self.azimuths_deg[i] if self.azimuths_deg else 0.0

    def truth(self, sample):
        """The truth dicts of every target at `sample` (see the module)."""
        out = []
        for i in range(len(self.ranges_m)):
            d = self.delay_samples(i)
            r = d * SPEED_OF_LIGHT / self.fs
            out.append({"target": i, "sample": int(sample), "range_m": r,
                        "bistatic_range_m": r, "requested_range_m": float(self.ranges_m[i]),
                        "velocity_mps": float(self.velocities_mps[i]),
                        "doppler_hz": self.doppler_hz(i), "delay_samples": d,
                        "snr_db": float(self.snr_db[i]), "azimuth_deg": self.azimuth_deg(i),
                        "fs": float(self.fs), "fc": float(self.fc)})
        return out


def _steering(azimuth_deg, nsurv):
    """Phases of a wave from azimuth_deg across the half-wavelength line array."""
    return np.exp(1j * np.pi * np.arange(nsurv) * math.sin(math.radians(azimuth_deg)))


class _FmIlluminator:
    def __init__(self, sc, rng):
        self._rng = rng
        cutoff = sc.audio_bandwidth_hz / sc.fs
        k = np.arange(FM_PROGRAMME_TAPS) - (FM_PROGRAMME_TAPS - 1) / 2
        taps = 2 * cutoff * np.sinc(2 * cutoff * k) * np.hamming(FM_PROGRAMME_TAPS)
        # unit-RMS programme: white noise of unit variance through taps of unit energy
        self._taps = taps / np.sqrt(np.sum(taps ** 2))
        self._tail = self._rng.standard_normal(FM_PROGRAMME_TAPS - 1)
        self._step = 2 * np.pi * sc.deviation_hz / sc.fs
        self._phase = 0.0

    def next(self, n):
        white = np.concatenate([self._tail, self._rng.standard_normal(n)])
        self._tail = white[-(FM_PROGRAMME_TAPS - 1):]
        programme = np.convolve(white, self._taps, mode="valid")
        phase = self._phase + np.cumsum(self._step * programme)
        self._phase = float(np.mod(phase[-1], 2 * np.pi)) if n else self._phase
        return np.exp(1j * phase)


class _OfdmIlluminator:
    def __init__(self, sc, rng):
        self._rng, self._fft, self._cp = rng, int(sc.ofdm_fft), int(sc.ofdm_cp)
        used = int(sc.ofdm_used)
        # the occupied subcarriers: used of them around DC, DC itself left empty
        half = used // 2
        self._bins = np.r_[np.arange(-half, 0), np.arange(1, used - half + 1)] % self._fft
        self._scale = math.sqrt(self._fft / used)  # unit average power
        self._pending = np.zeros(0, np.complex128)

    def _symbol(self):
        spectrum = np.zeros(self._fft, np.complex128)
        qpsk = self._rng.integers(0, 4, self._bins.size)
        spectrum[self._bins] = np.exp(1j * (np.pi / 4 + np.pi / 2 * qpsk))
        body = np.fft.ifft(spectrum, norm="ortho") * self._scale
        return np.concatenate([body[self._fft - self._cp:], body])

    def next(self, n):
        parts, have = [self._pending], self._pending.size
        while have < n:
            s = self._symbol()
            parts.append(s)
            have += s.size
        x = np.concatenate(parts)
        self._pending = x[n:]
        return x[:n]


class PassiveSceneGenerator:
    """Streams a PassiveScene: next(n) gives (reference[n], surveillance[nsurv, n]) of
    the next n samples, continuing the previous call (complex128)."""

    def __init__(self, sc: PassiveScene):
        sc.check()
        self.scene = sc
        rng = np.random.default_rng(int(sc.seed))
        # one generator per channel, drawing (re, im) pairs in sample order: the stream
        # does not depend on how it is cut into next() calls
        noise_seed = rng.integers(0, 2 ** 63)
        self._noise = [np.random.default_rng([noise_seed, k]) for k in range(sc.nsurv + 1)]
        self._illuminator = (_FmIlluminator if sc.illuminator == "fm" else
                             _OfdmIlluminator)(sc, np.random.default_rng(
                                 rng.integers(0, 2 ** 63)))
        nsurv = int(sc.nsurv)
        self._ref_gain = 10 ** (sc.ref_snr_db / 20)
        self._direct = 10 ** (sc.dpi_db / 20) * _steering(sc.dpi_azimuth_deg, nsurv)
        # (delay, per-channel complex amplitude, Doppler in cycles per sample)
        self._echoes = []
        if sc.clutter_count:
            count, most = int(sc.clutter_count), int(sc.clutter_max_delay)
            delays = 1 + rng.choice(most, count, replace=count > most)
            powers = rng.exponential(1.0, int(sc.clutter_count))
            powers *= 10 ** (sc.clutter_cnr_db / 10) / powers.sum()
            phases = rng.uniform(0, 2 * np.pi, int(sc.clutter_count))
            azimuths = rng.uniform(-90.0, 90.0, int(sc.clutter_count))
            for d, p, ph, az in zip(delays, powers, phases, azimuths):
                self._echoes.append((int(d), math.sqrt(p) * np.exp(1j * ph) *
                                     _steering(az, nsurv), 0.0))
        for i in range(len(sc.ranges_m)):
            self._echoes.append((sc.delay_samples(i), 10 ** (sc.snr_db[i] / 20) *
                                 _steering(sc.azimuth_deg(i), nsurv),
                                 sc.doppler_hz(i) / sc.fs))
        self._history = np.zeros(max([d for d, _, _ in self._echoes], default=0),
                                 np.complex128)
        self.position = 0  # samples produced so far

    def _noise_of(self, channel, n):
        pairs = self._noise[channel].standard_normal((n, 2)) * math.sqrt(0.5)
        return pairs[:, 0] + 1j * pairs[:, 1]

    def next(self, n):
        sc, nsurv = self.scene, int(self.scene.nsurv)
        x = self._illuminator.next(n)
        extended = np.concatenate([self._history, x])
        h = self._history.size
        ref = self._ref_gain * x + self._noise_of(0, n)
        surv = self._direct[:, None] * x[None, :] + np.stack(
            [self._noise_of(1 + k, n) for k in range(nsurv)])
        t = np.arange(self.position, self.position + n, dtype=np.float64)
        for d, amplitude, cycles in self._echoes:
            echo = extended[h - d:h - d + n]
            if cycles:
                echo = echo * np.exp(2j * np.pi * np.mod(cycles * t, 1.0))
            surv += amplitude[:, None] * echo[None, :]
        if h:
            self._history = extended[-h:]
        self.position += n
        return ref, surv


def simulate(sc: PassiveScene, nsamples):
    """(reference[nsamples], surveillance[nsurv, nsamples], truth list) of a scene from
    its start (complex64), as passive_scene_source plays it."""
    if int(nsamples) < 0:
        raise ValueError(f"nsamples must be >= 0 (got {nsamples!r})")
    gen = PassiveSceneGenerator(sc)
    ref, surv = gen.next(int(nsamples))
    truth = [t for s in range(0, int(nsamples), int(sc.truth_every)) for t in sc.truth(s)]
    return ref.astype(np.complex64), surv.astype(np.complex64), truth


class passive_scene_source(gr.sync_block):
    """A passive radar scene as streams (see the module): output 0 the reference
    channel, outputs 1..nsurv the surveillance channels (complex64), the targets' truth
    on the `truth` message port every truth_every samples. Parameters are checked
    (ValueError naming the parameter and its range) before anything is allocated."""

    def __init__(self, fs=2.4e6, fc=98e6, illuminator="fm", nsurv=1, ref_snr_db=40.0,
                 dpi_db=60.0, dpi_azimuth_deg=-60.0, clutter_count=0, clutter_max_delay=50,
                 clutter_cnr_db=40.0, ranges_m=(15e3,), velocities_mps=(150.0,),
                 snr_db=(-20.0,), azimuths_deg=(), deviation_hz=75e3,
                 audio_bandwidth_hz=15e3, ofdm_fft=2048, ofdm_used=1705, ofdm_cp=512,
                 truth_every=1048576, seed=1):
        sc = PassiveScene(float(fs), float(fc), str(illuminator), int(nsurv),
                          float(ref_snr_db), float(dpi_db), float(dpi_azimuth_deg),
                          int(clutter_count), int(clutter_max_delay), float(clutter_cnr_db),
                          [float(v) for v in ranges_m], [float(v) for v in velocities_mps],
                          [float(v) for v in snr_db], [float(v) for v in azimuths_deg],
                          float(deviation_hz), float(audio_bandwidth_hz), int(ofdm_fft),
                          int(ofdm_used), int(ofdm_cp), int(truth_every), int(seed))
        sc.check()
        gr.sync_block.__init__(self, name="passive_scene_source", in_sig=None,
                               out_sig=[np.complex64] * (1 + sc.nsurv))
        self.message_port_register_out(pmt.intern("truth"))
        self.scene = sc
        self._gen = PassiveSceneGenerator(sc)

    def work(self, input_items, output_items):
        n = len(output_items[0])
        start, every = self._gen.position, self.scene.truth_every
        for s in range(-(-start // every) * every, start + n, every):
            for t in self.scene.truth(s):
                self.message_port_pub(pmt.intern("truth"), scene_truth.dict_to_truth(t))
        ref, surv = self._gen.next(n)
        output_items[0][:] = ref
        for k in range(self.scene.nsurv):
            output_items[1 + k][:] = surv[k]
        return n
