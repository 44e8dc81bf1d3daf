//! characterise turns a fabric into the few numbers that explain it. It measures, through the
//! runner as a library, the patterns a LogGP fit needs (ping-pong, a stream of back-to-back
//! sends, and sends and receives with a known delay before their wait, which separate the
//! sender's and receiver's overheads from the latency, as Netgauge does); finds the protocol
//! switches with `curves` and refines them by measuring between; fits per segment the latency
//! `L`, the overheads `o_s` and `o_r` (each a fixed and a per-byte part), the gap `g` and the
//! gap per byte `G`, with residuals and confidence intervals; and writes a model card the
//! `loggp` fabric runs, and a report with the fitted curves over the measured ones.
