//! The fitted curves over the measured ones, as a plots `Figure`: the ping-pong's one-way
//! time, the stream's bandwidth and both overheads against message size, the measured points
//! as markers, the model as lines, each switch marked.

use plots::figure::{Axis, Corner, Figure, Line, Mark, Panel, Scale, Stroke, Ticks};
use plots::Chart;

use crate::fit::Fit;
use crate::model::Model;
use crate::observations::{Observations, Pattern};

/// Sizes to draw the model at: the measured ones and each side of every segment start, so a
/// jump shows as one.
fn model_sizes(obs: &Observations, model: &Model) -> Vec<u64> {
    let mut sizes: Vec<u64> = obs.series(Pattern::Pingpong).iter().map(|p| p.0).collect();
    for (from, _) in model.segments.iter().skip(1) {
        sizes.push(from.saturating_sub(1));
        sizes.push(*from);
    }
    sizes.retain(|&s| s > 0);
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

fn measured(obs: &Observations, p: Pattern, value: impl Fn(u64, f64) -> f64) -> Vec<(f64, f64)> {
    obs.series(p)
        .into_iter()
        .filter(|(s, _)| *s > 0)
        .map(|(s, ns)| (s as f64, value(s, ns)))
        .collect()
}

fn marks(fit: &Fit) -> Vec<Mark> {
    fit.switches
        .iter()
        .map(|s| Mark {
            x: s.before as f64,
            label: format!("switch {}..{}", s.after, s.before),
            stroke: Stroke::Dashed,
            colour: 9,
        })
        .collect()
}

/// Measured markers and the model's line, in one colour; nothing at or below zero, which a
/// log axis cannot show.
fn pair(
    panel: &mut Panel,
    name: &str,
    colour: usize,
    data: Vec<(f64, f64)>,
    model: Vec<(f64, f64)>,
) {
    let positive =
        |v: Vec<(f64, f64)>| -> Vec<(f64, f64)> { v.into_iter().filter(|p| p.1 > 0.0).collect() };
    let (data, model) = (positive(data), positive(model));
    panel.lines.push(Line {
        name: format!("{name} measured"),
        points: data,
        stroke: Stroke::Markers,
        colour,
    });
    panel.lines.push(Line {
        name: format!("{name} model"),
        points: model,
        stroke: Stroke::Solid,
        colour,
    });
}

/// The chart of a fit, named `fit-FABRIC`.
pub fn chart(fabric: &str, subtitle: &str, obs: &Observations, fit: &Fit) -> Chart {
    let model = fit.model();
    let sizes = model_sizes(obs, &model);
    let us = |_: u64, ns: f64| ns / 1e3;
    let mbs = |s: u64, ns: f64| if ns > 0.0 { s as f64 * 1e3 / ns } else { 0.0 };

    let mut latency = Panel::new(
        Axis::sizes(),
        Axis::new("one-way time (us)", Scale::Log10, Ticks::Number),
    );
    pair(
        &mut latency,
        "ping-pong",
        0,
        measured(obs, Pattern::Pingpong, us),
        sizes
            .iter()
            .map(|&s| (s as f64, model.pingpong(s) / 1e3))
            .collect(),
    );
    latency.marks = marks(fit);

    let mut bandwidth = Panel::new(
        Axis::sizes(),
        Axis::new("stream bandwidth (MB/s)", Scale::Log10, Ticks::Number),
    );
    bandwidth.legend = Corner::LowerRight;
    pair(
        &mut bandwidth,
        "stream",
        1,
        measured(obs, Pattern::Stream, mbs),
        sizes
            .iter()
            .map(|&s| (s as f64, mbs(s, model.stream(s, obs.window))))
            .collect(),
    );
    bandwidth.marks = marks(fit);

    let mut overheads = Panel::new(
        Axis::sizes(),
        Axis::new("time in the calls (us)", Scale::Log10, Ticks::Number),
    );
    pair(
        &mut overheads,
        "o_s",
        2,
        measured(obs, Pattern::Send, us),
        sizes
            .iter()
            .map(|&s| (s as f64, model.at(s).send(s) / 1e3))
            .collect(),
    );
    pair(
        &mut overheads,
        "o_r",
        3,
        measured(obs, Pattern::Recv, us),
        sizes
            .iter()
            .map(|&s| (s as f64, model.at(s).recv(s) / 1e3))
            .collect(),
    );
    overheads.marks = marks(fit);

    Chart {
        name: format!("fit-{fabric}"),
        figure: Figure::new(
            format!(
                "{fabric}: LogGP fit ({} segment(s)) over the measurements",
                fit.segments.len()
            ),
            subtitle,
            vec![latency, bandwidth, overheads],
        ),
    }
}
