#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Writes docs/blocks/<block>.md from grc/gpuradar_<block>.block.yml (parameters, ports,
documentation, Python call) plus a short example per block kept below. The YAML and the
public headers are the source: re-run after changing them.

  tools/gen_block_docs.py            # from the repository root
"""

import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A minimal, runnable use of each block (CPU backend; sizes small).
EXAMPLES = {
    "radar_scene_source": '''
fs, fc, pri = 2e6, 10e9, 1000
scene = gpuradar.radar_scene_source(fs, fc, fs / pri, 1e6, 10e-6, [], [15000.0], [6.0],
                                    [0.0], "snr_db", paced=False)
framer = gpuradar.pulse_framer(pri, 100, 512, 32, fs, fc, "rx_time")
tb.connect(scene, blocks.head(gr.sizeof_gr_complex, 4 * 32 * pri), framer,
           blocks.null_sink(gr.sizeof_gr_complex * 512))''',
    "sigmf_cpi_source": '''
# gpuradar-sim --preset examples wrote gpuradar_pd.sigmf-meta / .sigmf-data
src = gpuradar.sigmf_cpi_source("gpuradar_pd", "pulse_doppler")
framer = gpuradar.pulse_framer(src.pri_samples(), src.gate_start(), src.nrange(),
                               src.npulses(), src.fs(), src.fc(), "free")
tb.connect(src, framer, blocks.null_sink(gr.sizeof_gr_complex * src.nrange()))
tb.msg_connect(src, "truth", blocks.message_debug(), "print")
tb.run()
print(framer.emitted_cpis(), src.ncpi())''',
    "pulse_framer": '''
# file recorded from pulse 0 on: free-running schedule
src = blocks.file_source(gr.sizeof_gr_complex, "gpuradar_pd.sigmf-data", False)
framer = gpuradar.pulse_framer(1000, 100, 512, 32, 2e6, 10e9, "free")
tb.connect(src, framer, blocks.null_sink(gr.sizeof_gr_complex * 512))
tb.run()
print(framer.emitted_cpis(), framer.dropped_cpis(), framer.lost_samples(),
      framer.rejected_time_jumps())''',
    "pulse_compression": '''
pc = gpuradar.pulse_compression(512, 32, 1, "lfm", [], 1e6, 10e-6, 2e6, True, "taylor",
                                4, 35.0, 6.0, True, "auto", "cpu")
tb.connect(framer, pc, blocks.null_sink(gr.sizeof_gr_complex * 512))''',
    "beamformer": '''
# 16-channel half-wavelength ULA, 16 beams from -45 to 45 degrees, Taylor 35 dB taper,
# on the pulse stream (before pulse compression): items of 16 x 512 in, 16 x 512 out
bf = gpuradar.beamformer(16, 512, [], 16, -45.0, 45.0, 0.5, [], 0.0, "taylor", 4, 35.0,
                         6.0, "cpu")
tb.connect(framer, bf, blocks.null_sink(gr.sizeof_gr_complex * 16 * 512))
print(bf.beam_angles_deg())
# A 4 x 4 URA in the x-z plane: 5 azimuths x 3 elevations, row after row (15 beams)
ura = gpuradar.beamformer(16, 512, nbeams=5, fan_first_deg=-24.0, fan_last_deg=24.0,
                          nbeams_el=3, fan_el_first_deg=-12.0, fan_el_last_deg=12.0,
                          element_rows=4, backend="cpu")
print(ura.beam_angles_deg(), ura.beam_elevations_deg())''',
    "corner_turn": '''
ct = gpuradar.corner_turn(32, 512, 1, "cpu")     # npulses, nrange, channels
tb.connect(pc, ct, blocks.null_sink(gr.sizeof_gr_complex * 32))''',
    "doppler_filter": '''
df = gpuradar.doppler_filter(32, 512, 32, 1, "none", "hann", 4, 35.0, 6.0, True, "cpu")
tb.connect(ct, df, blocks.null_sink(gr.sizeof_gr_complex * 32))''',
    "envelope": '''
env = gpuradar.envelope(32, "square_law", False, "cpu")   # vlen, mode, dB
tb.connect(df, env, blocks.null_sink(gr.sizeof_float * 32))''',
    "pulse_doppler_processor": '''
pd = gpuradar.pulse_doppler_processor(
    512, 32, 32, 1, "lfm", [], 1e6, 10e-6, 2e6, True, "taylor", 4, 35.0, 6.0, True,
    "auto", "none", "hann", 4, 35.0, 6.0, True, "square_law", False, "cpu")
tb.connect(framer, pd, cfar)      # cfar: a cfar_2d(512, 32, ...)''',
    "cfar_2d": '''
cfar = gpuradar.cfar_2d(512, 32, 1, 2, 8, 2, 2, 1e-6, "ca", 0, "clip", "wrap", True,
                        4096, "cpu")
dbg = blocks.message_debug()
tb.connect(pd, cfar, blocks.null_sink(32))        # mask: one byte per cell
tb.msg_connect(cfar, "detections", dbg, "store")
tb.run()
from gnuradio.gpuradar import detections
for d in detections.collect(dbg):
    print(d["cpi"], d["range_m"], d["velocity_mps"], d["snr_db"])''',
    "cfar_1d": '''
# range-only CFAR on single pulses: |x|^2 of each pulse, one PDU per CPI of 32 pulses
env = gpuradar.envelope(512, "square_law", False, "cpu")
cfar = gpuradar.cfar_1d(512, 1, 2, 16, 1e-6, "ca", 0, "clip", False, 32, 4096, "cpu")
tb.connect(framer, env, cfar, blocks.null_sink(512))''',
    "backprojection": '''
from gnuradio.gpuradar import sar_sim
rec = sar_sim.read("sar.sigmf-meta")
g = rec.grid      # suggested image grid from the metadata
pulses = blocks.file_source(gr.sizeof_gr_complex * rec.nbins, rec.data_path, False)
geometry = blocks.file_source(gr.sizeof_double * 6, rec.geometry_path, False)
bp = gpuradar.backprojection(rec.nbins, g.nx, g.ny, g.x0, g.y0, g.dx, g.dy, g.z,
                             rec.npulses, "restart", "fast", [], "cpu")
image = blocks.vector_sink_c(g.nx)
tb.connect(pulses, (bp, 0)); tb.connect(geometry, (bp, 1)); tb.connect(bp, image)
tb.run()   # image.data(): ny rows of nx complex pixels''',
    "multiply_const": '''
gain = gpuradar.multiply_const(0.5 + 0j, 1024, "auto")
tb.connect(src, gain, dst)      # complex vectors of 1024; gain.set_k(...) while running''',
    "zmq_source": '''
# process 1 (sender): ... -> zeromq.push_sink(gr.sizeof_gr_complex, 1,
#     "ipc:///run/user/1000/gpuradar/radar.sock", 100, True)      # binds, tags passed
# process 2 (this one), after: mkdir -m 700 /run/user/1000/gpuradar
src = gpuradar.zmq_source(gr.sizeof_gr_complex, 1, "ipc:///run/user/1000/gpuradar/radar.sock")
tb.connect(src, framer)           # framer: a pulse_framer with trigger "rx_time"
tb.start()
# ... later: src.received_items(), src.dropped_messages(), src.drop_counts()''',
    "range_doppler_sink": '''
# QT GUI flowgraph (a QApplication exists): the processor's tap feeds the display while
# its stream output stays on the GPU for the CFAR
pd = gpuradar.pulse_doppler_processor(512, 32, 32, ..., tap_every=1)   # see its page
rd = gpuradar.range_doppler_sink("message", update_rate=10.0)
tb.msg_connect(pd, "map", rd, "map")
tb.msg_connect(cfar, "detections", rd, "detections")
layout.addWidget(rd.qwidget())     # GRC: gui_hint
print(rd.counts())                 # frames received, drawn, dropped''',
    "tracker": '''
cfar = gpuradar.cfar_2d(256, 64, backend="cpu", cluster=True)   # one detection per target
trk = gpuradar.tracker(9.21, 3, 5, 3, 5.0, 0.5, 5.0)
tb.msg_connect(cfar, "detections", trk, "detections")
dbg = blocks.message_debug()
tb.msg_connect(trk, "tracks", dbg, "store")                # or a track display''',
    "track_sink": '''
sink = gpuradar.track_sink(30e3, 150.0, 20, False, 10.0)   # range max, +-velocity, trail
tb.msg_connect(trk, "tracks", sink, "tracks")             # trk: a gpuradar.tracker
layout.addWidget(sink.qwidget())''',
    "rti_sink": '''
rti = gpuradar.rti_sink("range", "max", 0.0, 100)   # range profile, strongest over velocity
tb.msg_connect(pd, "map", rti, "map")                # pd: a processor with tap_every >= 1
layout.addWidget(rti.qwidget())''',
    "ppi_sink": '''
ppi = gpuradar.ppi_sink(30e3, 90.0, 5, 20, False, 10.0)   # range max, +-sector, rings, trail
tb.msg_connect(trk, "tracks", ppi, "tracks")             # trk: a tracker fed azimuths
tb.msg_connect(scene, "truth", ppi, "truth")             # optional: the scene's truth
layout.addWidget(ppi.qwidget())''',
    "detection_table": '''
table = gpuradar.detection_table(8, True, 5.0)    # max rows, print every CPI, updates/s
tb.msg_connect(cfar, "detections", table, "detections")
layout.addWidget(table.qwidget())''',
    "sar_image_sink": '''
sink = gpuradar.sar_image_sink(g.nx, g.ny, g.x0, g.y0, g.dx, g.dy, 50.0, 5.0)
tb.connect(bp, sink)               # bp: a backprojection on the same grid g
layout.addWidget(sink.qwidget())''',
    "pulse_tx_source": '''
# 4 CPI bursts of 32 pulses of P4 64 at tx_time 1.0 s (device clock), for a USRP sink or
# a radar_channel; the matched filter downstream takes the same code, "p4:64"
tx = gpuradar.pulse_tx_source("p4:64", [], 0.0, 32e-6, 2e6, True, 2e3, 0.5, "cpi", 32, 4,
                              1.0, "device")
tags = blocks.tag_debug(gr.sizeof_gr_complex, "tx")
tb.connect(tx, tags)              # tx_sob, tx_time at 0, 32000, ...; tx_eob at 31999, ...
tb.run()''',
    "radar_channel": '''
tx = gpuradar.pulse_tx_source("lfm", [], 1e6, 20e-6, 2e6, True, 2e3, 0.5, "cpi", 32, 4,
                              1.0, "device")
ch = gpuradar.radar_channel(2e6, 3e9, [12000.0, 24000.0], [20.0, -35.0], [0.0, 3.0],
                            "snr_db", 0.0, 0.25, 1.0, 10.0, 0, 1)   # tx_power 0.5^2
framer = gpuradar.pulse_framer(1000, 100, 512, 32, 2e6, 3e9, "rx_time")
tb.connect(tx, ch, framer, blocks.null_sink(gr.sizeof_gr_complex * 512))''',
    "stripmap_source": '''
acq = (9.6e9, 50e6, 1e-6, True, 60e6, 200.0, 150.0, 1000.0, 2000.0, 256, 0.0, 2.0)
src = gpuradar.stripmap_source(*acq, [2071.0], [150.0], [], [], 0.05, 0.0, 600)
tb.connect(src, blocks.null_sink(gr.sizeof_gr_complex * 256))''',
    "sar_focus": '''
acq = (9.6e9, 50e6, 1e-6, True, 60e6, 200.0, 150.0, 1000.0, 2000.0, 256, 0.0, 2.0)
src = gpuradar.stripmap_source(*acq, [2071.0], [150.0], [], [], 0.05, 0.0, 600)
focus = gpuradar.sar_focus(*acq, "csa", 0, "taylor", "hamming", "cpu")
sink = blocks.vector_sink_c(256)  # one focused azimuth line per item
tb.connect(src, focus, sink)''',
    "sar_geometry_source": '''
# GRC only (Python: blocks.file_source(gr.sizeof_double * 6, path, False))
# File "sar.geometry.f64" -> Backprojection input 1 (geometry)''',
}

PREAMBLE = '''from gnuradio import blocks, gr
from gnuradio import gpuradar
tb = gr.top_block()'''


def port_rows(ports):
    rows = []
    for p in ports or []:
        if p.get("domain") == "message":
            rows.append(f"| {p.get('id', p.get('label'))} | message | — | "
                        f"{'optional' if p.get('optional') else ''} |")
        else:
            dtype = str(p.get("dtype"))
            if "${" in dtype:  # a type that follows a parameter (input_type.type)
                dtype = f"`{dtype.replace('${', '').replace('}', '').strip()}`"
            rows.append(f"| {p.get('label', '')} | {dtype} | "
                        f"`{str(p.get('vlen', 1)).replace('${', '').replace('}', '').strip()}` | "
                        f"{'optional' if p.get('optional') else ''} |")
    return rows


def main():
    out_dir = os.path.join(ROOT, "docs", "blocks")
    os.makedirs(out_dir, exist_ok=True)
    names = []
    for f in sorted(os.listdir(os.path.join(ROOT, "grc"))):
        if not f.endswith(".block.yml"):
            continue
        y = yaml.safe_load(open(os.path.join(ROOT, "grc", f)))
        name = y["id"].replace("gpuradar_", "", 1)
        names.append((name, y["label"]))
        header = f"include/gnuradio/gpuradar/{name}.h"
        lines = [f"# {y['label']}", ""]
        lines.append(f"GRC block `{y['id']}` ([grc/{f}](../../grc/{f}))" +
                     (f"; C++ header [{header}](../../{header})" if os.path.exists(
                         os.path.join(ROOT, header)) else "") + ".")
        lines.append("This page is generated from the YAML by `tools/gen_block_docs.py`.")
        lines += ["", "## What it does", "", y.get("documentation", "").strip(), ""]
        lines += ["## Parameters", "", "| id | label | type | default | options |",
                  "|---|---|---|---|---|"]
        for p in y.get("parameters", []):
            opts = ", ".join(str(o) for o in p.get("options", []))
            default = str(p.get("default", "")).replace("|", "\\|")
            lines.append(f"| `{p['id']}` | {p.get('label', '')} | {p.get('dtype', '')} | "
                         f"`{default}` | {opts} |")
        lines += ["", "## Ports (stream shapes)", "",
                  "Item = one vector of `vlen` elements of the type.", "",
                  "| port | type | vlen | |", "|---|---|---|---|"]
        ins, outs = port_rows(y.get("inputs")), port_rows(y.get("outputs"))
        lines += [r.replace("| ", "| in: ", 1) for r in ins]
        lines += [r.replace("| ", "| out: ", 1) for r in outs]
        if y.get("asserts"):
            lines += ["", "Checked by GRC before generating:", ""]
            lines += [f"- `{a.replace('${', '').replace('}', '').strip()}`" for a in y["asserts"]]
        lines += ["", "## Tags", "",
                  "See [the CPI rules](../CONVENTIONS.md#streams-and-the-cpi) and "
                  "[the `cpi` tag fields](../CONVENTIONS.md#cpi-tag-fields); what this block "
                  "reads and writes is stated in *What it does* above.", ""]
        templates = y.get("templates", {})
        # A block that is also a variable (sigmf_cpi_source) is made by its var_make.
        make = (templates.get("make") or templates.get("var_make", "")).strip()
        # QT GUI blocks: drop GRC's Mako preamble (<% ... %>) from the call shown.
        make = re.sub(r"<%.*?%>\\?\n?", "", make, flags=re.S).strip()
        lines += ["## Python", "", "```python", make.replace("${", "{"), "```", ""]
        if name in EXAMPLES:
            lines += ["## Example", "", "```python", PREAMBLE + EXAMPLES[name], "```", ""]
        lines += ["GRC examples using the GPU Radar blocks: [examples/](../../examples/)", ""]
        with open(os.path.join(out_dir, name + ".md"), "w") as fh:
            fh.write("\n".join(lines))
    with open(os.path.join(out_dir, "README.md"), "w") as fh:
        fh.write("# Block user guides\n\nOne page per GNU Radio block (category "
                 "*[GPU Radar]* in GRC), generated from grc/*.block.yml by "
                 "`tools/gen_block_docs.py`.\n\n")
        for name, label in names:
            fh.write(f"- [{label}]({name}.md)\n")
        fh.write("\nChoosing CPI and FFT sizes: [../CPI_SIZING.md](../CPI_SIZING.md).\n")
        fh.write("\nThe offline pulse-Doppler example (examples/pulse_doppler_offline.grc: SigMF "
                 "recording -> framer -> pulse-Doppler -> CFAR 2-D, range-Doppler display and "
                 "detection table) in GNU Radio Companion, captured under Xvfb by "
                 "tools/screenshot_examples.py:\n\n"
                 "![GRC: offline pulse-Doppler](../images/grc_pulse_doppler_offline.png)\n")
    print(f"{len(names)} pages in {out_dir}")


if __name__ == "__main__":
    sys.exit(main())
