//! A node's two clocks, monotonic and wall, as exact piecewise-linear maps of true time.
//!
//! `monotonic(t)` advances at `1 + drift` from its last anchor and never steps; it stops while a
//! `Stall` VM freeze lasts. `wall(t) = monotonic(t) + offset`, and only `offset` jumps, at clock
//! steps. Both directions are exact integers: [`NodeClock::read`] rounds a reading down,
//! [`NodeClock::reaches`] gives the first true nanosecond at which a reading reaches a deadline.
//! This module knows nothing of events or timers; the engine calls it and re-maps its timers
//! whenever a mapping changes.

use crate::time::{mul_div_ceil, mul_div_floor, DriftRate, Dur, LocalTime, SimTime, RATE_ONE};
use serde::{Deserialize, Serialize};

/// Which of a node's clocks a timer or a validity check uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClockKind {
    Monotonic,
    Wall,
}

/// One node's monotonic and wall clock.
#[derive(Clone, Debug)]
pub struct NodeClock {
    anchor_true: SimTime,
    anchor_mono: LocalTime,
    drift: DriftRate,
    stalled: bool,
    wall_offset: Dur,
}

impl NodeClock {
    /// A clock that reads 0 (monotonic) and `wall_offset` (wall) at true time 0.
    pub fn new(drift: DriftRate, wall_offset: Dur) -> NodeClock {
        NodeClock {
            anchor_true: SimTime::ZERO,
            anchor_mono: LocalTime(0),
            drift,
            stalled: false,
            wall_offset,
        }
    }

    pub fn drift(&self) -> DriftRate {
        self.drift
    }

    pub fn is_stalled(&self) -> bool {
        self.stalled
    }

    /// The monotonic reading at true time `t` (at or after the last change of the mapping).
    pub fn mono(&self, t: SimTime) -> LocalTime {
        debug_assert!(t >= self.anchor_true, "clock read before its anchor");
        if self.stalled {
            return self.anchor_mono;
        }
        let elapsed = t.0 - self.anchor_true.0;
        if self.drift.ppt == 0 {
            return LocalTime(self.anchor_mono.0 + elapsed); // exact without the division
        }
        LocalTime(self.anchor_mono.0 + mul_div_floor(elapsed, self.drift.rate(), RATE_ONE))
    }

    /// The wall reading at true time `t`.
    pub fn wall(&self, t: SimTime) -> LocalTime {
        self.wall_of(self.mono(t))
    }

    /// The wall reading at the instant the monotonic clock reads `mono`.
    pub fn wall_of(&self, mono: LocalTime) -> LocalTime {
        mono + self.wall_offset
    }

    pub fn read(&self, kind: ClockKind, t: SimTime) -> LocalTime {
        match kind {
            ClockKind::Monotonic => self.mono(t),
            ClockKind::Wall => self.wall(t),
        }
    }

    /// The first true instant at or after `from` at which clock `kind` reads `deadline` or more,
    /// under the current mapping; [`SimTime::NEVER`] if a stalled clock has not reached it.
    pub fn reaches(&self, kind: ClockKind, deadline: LocalTime, from: SimTime) -> SimTime {
        let target_mono = match kind {
            ClockKind::Monotonic => deadline,
            ClockKind::Wall => deadline - self.wall_offset,
        };
        if self.mono(from) >= target_mono {
            return from;
        }
        if self.stalled {
            return SimTime::NEVER;
        }
        // mono(t) >= L  <=>  floor((t - a) * rate / 1e12) >= L - m
        //               <=>  t - a >= ceil((L - m) * 1e12 / rate)   (L - m is an integer)
        let needed = target_mono.0 - self.anchor_mono.0;
        let elapsed = mul_div_ceil(needed, RATE_ONE, self.drift.rate());
        SimTime(self.anchor_true.0.saturating_add(elapsed))
    }

    /// Re-anchors the mapping at `t` (keeping the current reading) so that a change can start there.
    fn reanchor(&mut self, t: SimTime) {
        let now = self.mono(t);
        self.anchor_true = t;
        self.anchor_mono = now;
    }

    /// From `t` on, the clocks run at `1 + drift`.
    pub fn set_drift(&mut self, t: SimTime, drift: DriftRate) {
        self.reanchor(t);
        self.drift = drift;
    }

    /// Steps the wall clock by `by` (forward or back); the monotonic clock does not move.
    pub fn step_wall(&mut self, by: Dur) {
        self.wall_offset += by;
    }

    /// A stalled VM freeze begins: both clocks stop counting at `t`.
    pub fn stall(&mut self, t: SimTime) {
        self.reanchor(t);
        self.stalled = true;
    }

    /// The stalled freeze ends at `t`: the clocks resume from where they stopped.
    pub fn resume(&mut self, t: SimTime) {
        self.reanchor(t);
        self.stalled = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Dur;

    const MONO: ClockKind = ClockKind::Monotonic;

    #[test]
    fn slow_clock_reaches_deadline_rounded_up() {
        // A -1000 ppm clock runs at 0.999. It reads 9.995 s at true 9.995 / 0.999 s
        // = 10.005005005005... s, so the first whole nanosecond is 10_005_005_006.
        let c = NodeClock::new(DriftRate::from_ppm_int(-1000), Dur::ZERO);
        let t = c.reaches(MONO, LocalTime(9_995_000_000), SimTime::ZERO);
        assert_eq!(t, SimTime(10_005_005_006));
        assert!(c.mono(t) >= LocalTime(9_995_000_000));
        assert!(c.mono(SimTime(t.0 - 1)) < LocalTime(9_995_000_000));
    }

    #[test]
    fn fast_clock_reads_ahead() {
        // +100 ppm: after 10 s of true time the clock reads 10 s + 10 s * 1e-4 = 10.001 s.
        let c = NodeClock::new(DriftRate::from_ppm_int(100), Dur::ZERO);
        assert_eq!(c.mono(SimTime(10_000_000_000)), LocalTime(10_001_000_000));
    }

    #[test]
    fn backward_wall_step_delays_wall_deadline() {
        // Wall deadline 10 s on a perfect clock is reached at true 10 s; after a -500 ms step at
        // true 2 s the wall clock reads 500 ms less, so it reaches 10 s at true 10.5 s.
        let mut c = NodeClock::new(DriftRate::ZERO, Dur::ZERO);
        let dl = LocalTime(10_000_000_000);
        assert_eq!(
            c.reaches(ClockKind::Wall, dl, SimTime(2_000_000_000)).0,
            10_000_000_000
        );
        c.step_wall(Dur::from_ms(-500));
        assert_eq!(
            c.reaches(ClockKind::Wall, dl, SimTime(2_000_000_000)).0,
            10_500_000_000
        );
        // The monotonic clock did not move.
        assert_eq!(
            c.reaches(MONO, dl, SimTime(2_000_000_000)).0,
            10_000_000_000
        );
    }

    #[test]
    fn forward_wall_step_can_fire_at_once() {
        let mut c = NodeClock::new(DriftRate::ZERO, Dur::ZERO);
        c.step_wall(Dur::from_secs(20));
        let at = SimTime(5_000_000_000);
        assert_eq!(
            c.reaches(ClockKind::Wall, LocalTime(10_000_000_000), at),
            at
        );
    }

    #[test]
    fn stalled_freeze_leaves_clock_behind_by_its_length() {
        // An 8 s stalled freeze from true 1 s to 9 s: afterwards the clock reads true time - 8 s.
        let mut c = NodeClock::new(DriftRate::ZERO, Dur::ZERO);
        c.stall(SimTime(1_000_000_000));
        assert_eq!(c.mono(SimTime(5_000_000_000)), LocalTime(1_000_000_000));
        assert_eq!(
            c.reaches(MONO, LocalTime(2_000_000_000), SimTime(5_000_000_000)),
            SimTime::NEVER
        );
        c.resume(SimTime(9_000_000_000));
        assert_eq!(c.mono(SimTime(20_000_000_000)), LocalTime(12_000_000_000));
        assert_eq!(c.wall(SimTime(20_000_000_000)), LocalTime(12_000_000_000));
    }

    #[test]
    fn drift_change_keeps_reading_continuous() {
        // 0 ppm until 10 s (reads 10 s), then +1000 ppm: 10 s later it reads 10 + 10.01 = 20.01 s.
        let mut c = NodeClock::new(DriftRate::ZERO, Dur::ZERO);
        c.set_drift(SimTime(10_000_000_000), DriftRate::from_ppm_int(1000));
        assert_eq!(c.mono(SimTime(10_000_000_000)), LocalTime(10_000_000_000));
        assert_eq!(c.mono(SimTime(20_000_000_000)), LocalTime(20_010_000_000));
    }

    #[test]
    fn reaches_is_the_exact_inverse_of_read() {
        for ppm in [-999_999i64, -1000, -37, 0, 1, 250, 100_000] {
            let c = NodeClock::new(DriftRate::from_ppm_int(ppm), Dur::ZERO);
            for l in [1i64, 999, 1_000_000_007, 86_400_000_000_000] {
                let t = c.reaches(MONO, LocalTime(l), SimTime::ZERO);
                if t == SimTime::NEVER {
                    // Beyond i64 nanoseconds (~292 years): only the near-stopped clock gets here.
                    assert!(
                        l as f64 / (1.0 + ppm as f64 * 1e-6) > 9e18,
                        "ppm {ppm} l {l}"
                    );
                    continue;
                }
                assert!(c.mono(t).0 >= l, "ppm {ppm} l {l}");
                assert!(c.mono(SimTime(t.0 - 1)).0 < l, "ppm {ppm} l {l}");
            }
        }
    }
}
