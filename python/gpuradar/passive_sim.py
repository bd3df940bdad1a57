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
- surveillance channel k (k = 0 .. nsurv-1), an array with the module's geometry
  (kernels/array/array_geometry.h, as radar_scene_source and the beamformer): element k
  at p_k, element_positions_m (x, y, z per channel, m) or, empty, the ULA on the x axis
  centred on the origin, element_spacing_wl wavelengths at fc apart (channel 0 at the
  most negative x); a wave from azimuth a (elevation 0) reaches channel k with phase
  exp(+j 2 pi p_k . u(a) / lambda), u(a) = (sin a, cos a, 0), lambda = c / fc:
  the direct path sqrt(10^(dpi_db/10)) x[n] from dpi_azimuth_deg; static clutter: scatterers
  at zero Doppler, delays 1..clutter_max_delay samples (uniform; all different while
  clutter_count <= clutter_max_delay), random azimuths,
  complex Gaussian amplitudes whose powers sum to 10^(clutter_cnr_db/10); targets:
  sqrt(10^(snr_db/10)) x[n - d] exp(j 2 pi f_D n / fs) from their azimuth; and noise.

Front end (each off by default; the active simulators' receiver model and parameter
names, kernels/scene/front_end.h), applied to every channel, reference included, after
the noise, in the order of a direct-conversion receiver: LO phase noise (a Wiener process
of 3 dB linewidth phase_noise_linewidth_hz: steps of variance 2 pi linewidth / fs; one LO
feeds every channel, so all rotate by the same phase, as a coherent receiver such as a
KrakenSDR does), I/Q imbalance (the Q branch's gain iq_gain_db and LO phase error
iq_phase_deg: v = mu z + nu conj(z), mu = (1 + g e^-jp) / 2, nu = (1 - g e^jp) / 2),
DC offset (dc_offset_i + j dc_offset_q, sample units), then the ADC (adc_bits > 0: codes
round(u / D) half away from zero, D = 2 adc_full_scale / 2^bits, clamped to
[-2^(bits-1), 2^(bits-1) - 1]; each clamped rail counted, adc_clipped()). Levels are in
units of the noise: with the direct path at 60 dB its amplitude is 1000, so a full scale
a few times the channel's RMS is the realistic choice.

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
    element_spacing_wl: float = 0.5
    element_positions_m: List[float] = field(default_factory=list)
    dc_offset_i: float = 0.0
    dc_offset_q: float = 0.0
    iq_gain_db: float = 0.0
    iq_phase_deg: float = 0.0
    phase_noise_linewidth_hz: float = 0.0
    adc_bits: int = 0
    adc_full_scale: float = 1.0

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
        if self.element_positions_m:
            if len(self.element_positions_m) != 3 * int(self.nsurv):
                raise ValueError(f"element_positions_m must be empty (the ULA) or hold x, y, "
                                 f"z for each of the nsurv = {int(self.nsurv)} channels "
                                 f"({3 * int(self.nsurv)} numbers) (got "
                                 f"{len(self.element_positions_m)} numbers)")
            for i, v in enumerate(self.element_positions_m):
                if not math.isfinite(v):
                    raise ValueError(f"element_positions_m[{i}] must be finite (m) "
                                     f"(got {v!r})")
        else:
            positive("element_spacing_wl", self.element_spacing_wl)
        for name in ("dc_offset_i", "dc_offset_q", "iq_gain_db"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be finite (got {getattr(self, name)!r})")
        if not (math.isfinite(self.iq_phase_deg) and -90.0 < self.iq_phase_deg < 90.0):
            raise ValueError(f"iq_phase_deg must be in (-90, 90) degrees (got "
                             f"{self.iq_phase_deg!r})")
        if not (math.isfinite(self.phase_noise_linewidth_hz) and
                0.0 <= self.phase_noise_linewidth_hz < self.fs / 2):
            raise ValueError(f"phase_noise_linewidth_hz must be in [0, fs/2 = "
                             f"{self.fs / 2:g}) Hz (got {self.phase_noise_linewidth_hz!r})")
        if not (int(self.adc_bits) == self.adc_bits and 0 <= int(self.adc_bits) <= 32):
            raise ValueError(f"adc_bits must be 0 (no ADC) or in 1 .. 32 (got "
                             f"{self.adc_bits!r})")
        positive("adc_full_scale", self.adc_full_scale)

    def wavelength_m(self):
        return SPEED_OF_LIGHT / self.fc

    def element_positions(self):
        """(nsurv, 3) element positions (m): element_positions_m or the centred ULA."""
        n = int(self.nsurv)
        if self.element_positions_m:
            return np.asarray(self.element_positions_m, np.float64).reshape(n, 3)
        pos = np.zeros((n, 3))
        pos[:, 0] = (np.arange(n) - (n - 1) / 2) * self.element_spacing_wl * \
            self.wavelength_m()
        return pos

    def steering(self, azimuth_deg):
        """Phases of a plane wave from azimuth_deg (elevation 0) at each channel."""
        a = math.radians(azimuth_deg)
        u = np.array([math.sin(a), math.cos(a), 0.0])
        return np.exp(2j * np.pi * (self.element_positions() @ u) / self.wavelength_m())

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


class FrontEnd:
    """The receiver front end of the module's simulators (kernels/scene/front_end.h; see
    the module): apply(channels) impairs the next samples of every channel in place,
    continuing the previous call; clipped counts the ADC's clamped rails."""

    def __init__(self, sc, seed):
        self._sc = sc
        g, p = 10 ** (sc.iq_gain_db / 20), math.radians(sc.iq_phase_deg)
        self.mu = (1 + g * complex(math.cos(p), -math.sin(p))) / 2
        self.nu = (1 - g * complex(math.cos(p), math.sin(p))) / 2
        self._step_sd = math.sqrt(2 * math.pi * sc.phase_noise_linewidth_hz / sc.fs)
        self._rng = np.random.default_rng(seed)
        self._phase = 0.0
        self.clipped = 0

    def active(self):
        sc = self._sc
        return bool(sc.dc_offset_i or sc.dc_offset_q or sc.iq_gain_db or sc.iq_phase_deg
                    or sc.phase_noise_linewidth_hz or sc.adc_bits)

    def apply(self, x):
        """x: (channels, n) complex128, impaired in place and returned."""
        sc, n = self._sc, x.shape[1]
        if not self.active() or n == 0:
            return x
        if self._step_sd:
            phi = self._phase + np.cumsum(self._step_sd * self._rng.standard_normal(n))
            self._phase = float(phi[-1])
            x *= np.exp(1j * phi)[None, :]
        if sc.iq_gain_db or sc.iq_phase_deg:
            x[:] = self.mu * x + self.nu * np.conj(x)
        if sc.dc_offset_i or sc.dc_offset_q:
            x += complex(sc.dc_offset_i, sc.dc_offset_q)
        if sc.adc_bits:
            step = 2 * sc.adc_full_scale / 2 ** int(sc.adc_bits)
            hi, lo = 2 ** (int(sc.adc_bits) - 1) - 1, -2 ** (int(sc.adc_bits) - 1)
            rails = []
            for rail in (x.real, x.imag):
                u = rail / step
                q = np.sign(u) * np.floor(np.abs(u) + 0.5)  # half away from zero
                with np.errstate(invalid="ignore"):
                    self.clipped += int(np.count_nonzero(q > hi) + np.count_nonzero(q < lo))
                rails.append(np.clip(q, lo, hi) * step)
            x[:] = rails[0] + 1j * rails[1]
        return x


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
        # its own generator: the scene's other draws do not depend on the front end
        self.front_end = FrontEnd(sc, [int(sc.seed), 0xFE])
        self._ref_gain = 10 ** (sc.ref_snr_db / 20)
        self._direct = 10 ** (sc.dpi_db / 20) * sc.steering(sc.dpi_azimuth_deg)
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
                                     sc.steering(az), 0.0))
        for i in range(len(sc.ranges_m)):
            self._echoes.append((sc.delay_samples(i), 10 ** (sc.snr_db[i] / 20) *
                                 sc.steering(sc.azimuth_deg(i)),
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
        if self.front_end.active():
            both = self.front_end.apply(np.vstack([ref[None, :], surv]))
            ref, surv = both[0], both[1:]
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
    channel, outputs 1..nsurv the surveillance channels (complex64; each with an
    `rx_rate` tag, fs, on its first sample, as SDR sources stamp), the targets' truth
    on the `truth` message port every truth_every samples. Parameters are checked
    (ValueError naming the parameter and its range) before anything is allocated."""

    def __init__(self, fs=2.4e6, fc=98e6, illuminator="fm", nsurv=1, ref_snr_db=40.0,
                 dpi_db=60.0, dpi_azimuth_deg=-60.0, clutter_count=0, clutter_max_delay=50,
                 clutter_cnr_db=40.0, ranges_m=(15e3,), velocities_mps=(150.0,),
                 snr_db=(-20.0,), azimuths_deg=(), deviation_hz=75e3,
                 audio_bandwidth_hz=15e3, ofdm_fft=2048, ofdm_used=1705, ofdm_cp=512,
                 truth_every=1048576, seed=1, element_spacing_wl=0.5,
                 element_positions_m=(), dc_offset_i=0.0, dc_offset_q=0.0, iq_gain_db=0.0,
                 iq_phase_deg=0.0, phase_noise_linewidth_hz=0.0, adc_bits=0,
                 adc_full_scale=1.0):
        sc = PassiveScene(float(fs), float(fc), str(illuminator), int(nsurv),
                          float(ref_snr_db), float(dpi_db), float(dpi_azimuth_deg),
                          int(clutter_count), int(clutter_max_delay), float(clutter_cnr_db),
                          [float(v) for v in ranges_m], [float(v) for v in velocities_mps],
                          [float(v) for v in snr_db], [float(v) for v in azimuths_deg],
                          float(deviation_hz), float(audio_bandwidth_hz), int(ofdm_fft),
                          int(ofdm_used), int(ofdm_cp), int(truth_every), int(seed),
                          float(element_spacing_wl), [float(v) for v in element_positions_m],
                          float(dc_offset_i), float(dc_offset_q), float(iq_gain_db),
                          float(iq_phase_deg), float(phase_noise_linewidth_hz),
                          int(adc_bits), float(adc_full_scale))
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
        clipped = self._gen.front_end.clipped
        ref, surv = self._gen.next(n)
        if self._gen.front_end.clipped > clipped and not clipped:
            # once: the count keeps growing in adc_clipped(), the log would flood
            self.logger.warn(f"ADC clipping: {self._gen.front_end.clipped - clipped} rail "
                             f"values clamped at full scale {self.scene.adc_full_scale:g} "
                             f"(levels are noise units: raise adc_full_scale; counted in "
                             f"adc_clipped())")
        output_items[0][:] = ref
        for k in range(self.scene.nsurv):
            output_items[1 + k][:] = surv[k]
        if self.nitems_written(0) == 0:
            # the sample rate as SDR sources stamp it: clutter_cancel and
            # cross_ambiguity compare the channels' rates by it
            for port in range(1 + self.scene.nsurv):
                self.add_item_tag(port, 0, pmt.intern("rx_rate"),
                                  pmt.from_double(self.scene.fs))
        return n

    def adc_clipped(self):
        """Rail values (I and Q counted separately, every channel) clamped by the ADC."""
        return self._gen.front_end.clipped


#: gpuradar-passive's CPI of the default scene (samples).
DEFAULT_CPI = 16384
#: The default scene's targets: (delay samples, Doppler bin of a DEFAULT_CPI-sample CPI,
#: SNR dB per sample): 15-23 dB above the noise after a CPI's integration.
DEFAULT_TARGETS = ((18, 6, -20.0), (37, -9, -18.0), (52, 14, -16.0))


def default_scene():
    """gpuradar-passive's and gpuradar-sim passive's scene: a UHF DVB-T-like illuminator
    (all subcarriers but DC) at 1 Msps, a reference 20 dB above the direct path (the
    cancellation subtracts the reference scaled to the direct path, its noise with it),
    direct path 50 dB and 16 clutter scatterers at 35 dB over delays 1..12, three
    targets on range and Doppler bins."""
    fs, fc = 1e6, 600e6
    return PassiveScene(
        fs=fs, fc=fc, illuminator="ofdm", ofdm_fft=256, ofdm_used=255, ofdm_cp=32,
        ref_snr_db=70.0, dpi_db=50.0, dpi_azimuth_deg=-40.0, clutter_count=16,
        clutter_max_delay=12, clutter_cnr_db=35.0,
        ranges_m=[d * SPEED_OF_LIGHT / fs for d, _, _ in DEFAULT_TARGETS],
        velocities_mps=[k * fs / DEFAULT_CPI * SPEED_OF_LIGHT / fc
                        for _, k, _ in DEFAULT_TARGETS],
        snr_db=[s for _, _, s in DEFAULT_TARGETS], seed=1)


# --- SigMF recordings of several coherent channels ---------------------------------------
#: Field prefix of the passive radar metadata (under the gpuradar extension).
PASSIVE_NS = "gpuradar:passive_"
#: Samples simulated per chunk when writing a recording (bounded memory).
WRITE_CHUNK = 1 << 18


@dataclass
class PassiveRecording:
    """A multi-channel recording: channel `reference` is the reference, `surveillance`
    the surveillance channels (indices into the interleaved channels)."""
    base: str
    meta_path: str
    data_path: str
    fs: float
    fc: float
    nchannels: int
    nsamples: int  # per channel
    reference: int
    surveillance: List[int]
    truth: List[dict]
    scene: dict = None  # gpuradar:passive_scene (gpuradar-sim passive), else None

    def channel_samples(self, channel, start=0, count=None):
        """complex64 samples of one channel (a strided view of a memory map)."""
        data = np.memmap(self.data_path, dtype="<c8", mode="r",
                         shape=(self.nsamples, self.nchannels))
        stop = self.nsamples if count is None else min(self.nsamples, start + count)
        return np.asarray(data[start:stop, channel])


def write_recording(base, sc: PassiveScene, nsamples, progress=None):
    """Simulates nsamples of sc into <base>.sigmf-data (cf32_le, core:num_channels =
    1 + nsurv interleaved sample by sample: channel 0 the reference, 1.. the surveillance
    channels) and <base>.sigmf-meta (core:frequency fc; the scene's parameters under
    gpuradar:passive_*; each target's truth as an annotation over the whole recording:
    bistatic range and velocity). Returns the truth dicts. progress(done) per chunk."""
    from . import sigmf_io
    sc.check()
    nsamples = int(nsamples)
    if nsamples < 1:
        raise ValueError(f"nsamples must be >= 1 (got {nsamples!r})")
    gen = PassiveSceneGenerator(sc)
    data_path = str(base) + sigmf_io.DATA_SUFFIX
    with sigmf_io.naming_write_errors(data_path), open(data_path, "wb") as f:
        done = 0
        while done < nsamples:
            n = min(WRITE_CHUNK, nsamples - done)
            ref, surv = gen.next(n)
            block = np.empty((n, 1 + sc.nsurv), np.complex64)
            block[:, 0] = ref
            block[:, 1:] = surv.T
            f.write(memoryview(block).cast("B"))
            done += n
            if progress:
                progress(done)
    g = sigmf_io.global_fields(float(sc.fs), f"passive radar scene ({sc.illuminator} "
                               f"illuminator, {sc.nsurv} surveillance channel(s))",
                               "gnuradio.gpuradar.passive_sim")
    g["core:num_channels"] = 1 + int(sc.nsurv)
    g[PASSIVE_NS + "reference_channel"] = 0
    g[PASSIVE_NS + "surveillance_channels"] = list(range(1, 1 + int(sc.nsurv)))
    g[PASSIVE_NS + "adc_clipped"] = int(gen.front_end.clipped)
    scene = {k: v for k, v in vars(sc).items()}
    g[PASSIVE_NS + "scene"] = scene
    annotations = [{"core:sample_start": 0, "core:sample_count": nsamples,
                    "core:label": f"target {t['target']}",
                    **{"gpuradar:" + k: v for k, v in t.items()}}
                   for t in sc.truth(0)]
    sigmf_io.write_meta(base, g, [{"core:sample_start": 0, "core:frequency": float(sc.fc)}],
                        annotations, 1)
    return sc.truth(0)


def read_recording(path, reference=None, surveillance=None):
    """The PassiveRecording of <base>.sigmf-meta/-data (path: either file or the base):
    cf32_le, core:num_channels >= 2 (default 2), core:sample_rate, core:frequency of the
    first capture (or gpuradar:passive_scene's fc). reference / surveillance: channel
    indices replacing the metadata's (default 0 and 1..). sigmf_io.RecordingError naming
    the file and the field otherwise."""
    from . import sigmf_io
    base = sigmf_io.base_of(path)
    meta_path, data_path = base + sigmf_io.META_SUFFIX, base + sigmf_io.DATA_SUFFIX
    meta = sigmf_io.read_meta(meta_path)
    g = meta["global"]
    err = sigmf_io.RecordingError
    if g.get("core:datatype") != "cf32_le":
        raise err(f"{meta_path}: metadata field 'global.core:datatype' must be cf32_le "
                  f"(got {g.get('core:datatype')!r})")
    fs = g.get("core:sample_rate")
    if not (isinstance(fs, (int, float)) and not isinstance(fs, bool) and
            math.isfinite(fs) and fs > 0):
        raise err(f"{meta_path}: metadata field 'global.core:sample_rate' must be a number "
                  f"> 0 (got {fs!r})")
    nch = g.get("core:num_channels", 2)
    if not (isinstance(nch, int) and not isinstance(nch, bool) and 2 <= nch <= 65):
        raise err(f"{meta_path}: metadata field 'global.core:num_channels' must be an "
                  f"integer in [2, 65] (a reference and surveillance channels) (got {nch!r})")
    captures = meta.get("captures") or [{}]
    fc = captures[0].get("core:frequency") if isinstance(captures[0], dict) else None
    if fc is None and isinstance(g.get(PASSIVE_NS + "scene"), dict):
        fc = g[PASSIVE_NS + "scene"].get("fc")
    if not (isinstance(fc, (int, float)) and not isinstance(fc, bool) and
            math.isfinite(fc) and fc > 0):
        raise err(f"{meta_path}: metadata field 'captures[0].core:frequency' (the carrier, "
                  f"for the velocity axis) must be a number > 0 (got {fc!r})")
    ref = g.get(PASSIVE_NS + "reference_channel", 0) if reference is None else reference
    surv = (g.get(PASSIVE_NS + "surveillance_channels", [c for c in range(nch) if c != ref])
            if surveillance is None else surveillance)
    if not (isinstance(ref, int) and 0 <= ref < nch):
        raise err(f"{meta_path}: the reference channel must be in [0, {nch - 1}] (got "
                  f"{ref!r})")
    if not (isinstance(surv, list) and surv and
            all(isinstance(c, int) and 0 <= c < nch and c != ref for c in surv)):
        raise err(f"{meta_path}: the surveillance channels must be channel indices in "
                  f"[0, {nch - 1}] other than the reference {ref} (got {surv!r})")
    size = sigmf_io.data_file(data_path, meta_path)
    frame = 8 * nch
    if size % frame:
        raise err(f"{data_path}: {size} bytes is not a whole number of samples of "
                  f"{nch} interleaved cf32 channels ({frame} bytes each)")
    truth = [{k[len("gpuradar:"):]: v for k, v in a.items() if k.startswith("gpuradar:")}
             for a in meta.get("annotations", []) if isinstance(a, dict)]
    truth = [t for t in truth if "bistatic_range_m" in t and "velocity_mps" in t]
    scene = g.get(PASSIVE_NS + "scene")
    return PassiveRecording(base, meta_path, data_path, float(fs), float(fc), nch,
                            size // frame, ref, list(surv), truth,
                            scene if isinstance(scene, dict) else None)
