//! A node's clock error over true time as polylines, from the breakpoints a [`Timeline`] keeps.
//!
//! Error is local minus true time, in nanoseconds, for the monotonic and the wall clock. Between
//! breakpoints it changes linearly (constant drift), so the polylines are exact (unless the
//! timeline thinned a node's breakpoints, past thousands of them). Nothing here
//! knows pixels; the charts scale what these functions return.

use super::timeline::Timeline;

/// Clock error over true time: (true ns, error ns), in time order.
pub type ErrorLine = Vec<(i64, i64)>;

/// The error of `node`'s monotonic and wall clocks as polylines, exact between breakpoints and
/// extended to the end of the run at `drift_ppm` (or falling 1 ns per ns while a stalled VM
/// freeze holds the clock past its last breakpoint). A wall step is a vertical segment: two
/// points at the same instant.
pub fn clock_series(tl: &Timeline, node: usize, drift_ppm: f64) -> (ErrorLine, ErrorLine) {
    let Some(pts) = tl.clock_error.get(node) else {
        return (Vec::new(), Vec::new());
    };
    let (mut mono, mut wall) = (Vec::new(), Vec::new());
    let Some(last) = pts.last() else {
        return (mono, wall);
    };
    for (k, p) in pts.iter().enumerate() {
        let off = p.wall_err_ns - p.mono_err_ns;
        mono.push((p.t.ns(), p.mono_err_ns));
        if k > 0 {
            let prev_off = pts[k - 1].wall_err_ns - pts[k - 1].mono_err_ns;
            if prev_off != off {
                wall.push((p.t.ns(), p.mono_err_ns + prev_off));
            }
        }
        wall.push((p.t.ns(), p.wall_err_ns));
    }
    let end = tl.end.ns();
    if end > last.t.ns() {
        let dt = end - last.t.ns();
        let stalled = tl.pauses.iter().any(|p| {
            p.span.node == node && p.stall && p.span.start <= last.t && p.span.end.ns() >= end
        });
        let delta = if stalled {
            -dt
        } else {
            (drift_ppm * dt as f64 / 1e6).round() as i64
        };
        mono.push((end, last.mono_err_ns + delta));
        wall.push((end, last.wall_err_ns + delta));
    }
    (mono, wall)
}

/// `pts` clipped to `[t0_ns, t1_ns]`, interpolating at the edges.
pub fn clip(pts: &[(i64, i64)], t0_ns: i64, t1_ns: i64) -> Vec<(i64, f64)> {
    let mut out = Vec::new();
    let at = |a: (i64, i64), b: (i64, i64), t: i64| -> f64 {
        if b.0 == a.0 {
            b.1 as f64
        } else {
            a.1 as f64 + (b.1 - a.1) as f64 * (t - a.0) as f64 / (b.0 - a.0) as f64
        }
    };
    if pts.len() == 1 && (t0_ns..=t1_ns).contains(&pts[0].0) {
        out.push((pts[0].0, pts[0].1 as f64));
    }
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b.0 < t0_ns || a.0 > t1_ns {
            continue;
        }
        let (sa, sb) = (a.0.max(t0_ns), b.0.min(t1_ns));
        let pa = (sa, if sa == a.0 { a.1 as f64 } else { at(a, b, sa) });
        let pb = (sb, if sb == b.0 { b.1 as f64 } else { at(a, b, sb) });
        if out.last() != Some(&pa) {
            out.push(pa);
        }
        out.push(pb);
    }
    out
}

/// Whether some node's wall clock differs from its monotonic clock at some breakpoint.
pub fn wall_differs(tl: &Timeline) -> bool {
    tl.clock_error
        .iter()
        .flatten()
        .any(|p| p.wall_err_ns != p.mono_err_ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;
    use crate::trace::timeline::ClockPoint;

    fn point(t: i64, mono: i64, wall: i64) -> ClockPoint {
        ClockPoint {
            t: SimTime::from_ns(t),
            mono_err_ns: mono,
            wall_err_ns: wall,
        }
    }

    #[test]
    fn a_drift_change_and_a_wall_step_give_points_at_their_instants() {
        // Node 0 starts exact; at 10 s its drift changes (breakpoint, error still 0); by 20 s at
        // -500 ppm it is 10 s * -500e-6 = -5 ms behind, and its wall clock steps by +1 s there.
        // The run ends at 30 s: 10 s more at -500 ppm is another -5 ms.
        let tl = Timeline {
            node_names: vec!["a".into()],
            end: SimTime::from_ns(30_000_000_000),
            clock_error: vec![vec![
                point(0, 0, 0),
                point(10_000_000_000, 0, 0),
                point(20_000_000_000, -5_000_000, 995_000_000),
            ]],
            ..Timeline::default()
        };
        let (mono, wall) = clock_series(&tl, 0, -500.0);
        assert_eq!(
            mono,
            [
                (0, 0),
                (10_000_000_000, 0),
                (20_000_000_000, -5_000_000),
                (30_000_000_000, -10_000_000)
            ]
        );
        // The step is vertical: -5 ms just before, +995 ms just after, at 20 s.
        assert_eq!(
            wall,
            [
                (0, 0),
                (10_000_000_000, 0),
                (20_000_000_000, -5_000_000),
                (20_000_000_000, 995_000_000),
                (30_000_000_000, 990_000_000)
            ]
        );
        assert!(wall_differs(&tl));
    }

    #[test]
    fn clip_interpolates_at_the_window_edges() {
        let line = [(0, 0), (10, -100), (20, -100)];
        assert_eq!(clip(&line, 5, 15), [(5, -50.0), (10, -100.0), (15, -100.0)]);
        assert_eq!(clip(&line, 30, 40), []);
    }
}
