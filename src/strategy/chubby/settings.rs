//! `ChubbySession`'s settings as a scenario writes them: grace, lock-delay, the bug of acting
//! in jeopardy, the client's holder margin, and how the master answers KeepAlives (held open
//! until the hold margin, or at once) with the extension it grants under load. Its fields are
//! checked with its roles ([`super::ChubbySession`]'s `check`).

use super::{ChubbyConfig, ChubbySession as ChubbyProtocol, KeepAliveMode};
use crate::scenario::{LeaseFields, Role, Scenario};
use crate::strategy::settings::check;
use crate::strategy::{Margin, Settings};
use crate::time::LocalDur;
use serde::Deserialize;

/// A Chubby lock held through a session with the cell's master, the one `Grantor`:
/// KeepAlives, the client's conservative local lease, jeopardy and grace, and lock-delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChubbySession {
    /// How long a client in jeopardy keeps trying before it gives the session up, on its
    /// monotonic clock from the end of its local lease. Default 45 s.
    #[serde(default = "grace")]
    pub grace: LocalDur,
    /// After a session expires, the master refuses its lock to anyone for this long.
    #[serde(default)]
    pub lock_delay: LocalDur,
    /// The bug: the client acts on the lock in jeopardy, until grace ends.
    #[serde(default)]
    pub act_in_jeopardy: bool,
    /// The client's local lease ends this much before the end the master's answer implies.
    #[serde(default)]
    pub holder_margin: LocalDur,
    /// How the master answers a KeepAlive: held open until the session's remaining lease is
    /// down to `hold_margin` (Chubby), or at once. Default `HeldOpen`.
    #[serde(default)]
    pub keepalive: KeepAliveMode,
    /// With `HeldOpen`, the master answers a held KeepAlive when the session has this much left
    /// on its clock. Default 1 s.
    #[serde(default = "hold_margin")]
    pub hold_margin: LocalDur,
    /// Set, the master is under load for the whole run and extends sessions by this, at least
    /// T, instead of T. Default: never under load.
    #[serde(default)]
    pub extend_under_load: Option<LocalDur>,
}

fn grace() -> LocalDur {
    LocalDur::from_ms(45_000)
}

fn hold_margin() -> LocalDur {
    LocalDur::from_secs(1)
}

impl Settings for ChubbySession {
    const NAME: &'static str = "ChubbySession";
    type Protocol = ChubbyProtocol;

    /// Every period, and `lease.initial_leader`: the client that asks for the lock first (the
    /// others' first Acquire waits `retry_every`, their session open meanwhile).
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::RACING
    }

    fn to_ron(&self) -> String {
        let ChubbySession {
            grace,
            lock_delay,
            act_in_jeopardy,
            holder_margin,
            keepalive,
            hold_margin,
            extend_under_load,
        } = self;
        let under_load = extend_under_load
            .map(|e| format!(", extend_under_load: \"{e}\""))
            .unwrap_or_default();
        format!(
            "ChubbySession(grace: \"{grace}\", lock_delay: \"{lock_delay}\", \
             act_in_jeopardy: {act_in_jeopardy}, holder_margin: \"{holder_margin}\", \
             keepalive: {keepalive:?}, hold_margin: \"{hold_margin}\"{under_load})"
        )
    }

    fn build(&self) -> ChubbyProtocol {
        ChubbyProtocol::new(
            ChubbyConfig {
                grace: self.grace,
                lock_delay: self.lock_delay,
                act_in_jeopardy: self.act_in_jeopardy,
                holder_margin: self.holder_margin,
                keepalive: self.keepalive,
                hold_margin: self.hold_margin,
                extend_under_load: self.extend_under_load,
            },
            self.to_ron(),
        )
    }

    /// Every client (each node but the master) sends a KeepAlive every `lease.renew_every` at
    /// most: its timer, the KeepAlive and the master's reply, 3 (the scenario's estimate counts
    /// one holder's renewals, not every client's). Held open, a KeepAlive is answered about
    /// once per T - hold_margin, and `renew_every` paces only the KeepAlives of a client with
    /// no answer: the bound still holds. Grace and lock-delay are one-shot timers after an
    /// expiry, not periods.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let clients = s.nodes.iter().filter(|n| n.role != Role::Grantor).count() as f64;
        check::per_second(3.0 * clients, s.lease.renew_every())
    }

    /// The holder margin is varied as epsilon; the master's timer is not a grantor's wait of
    /// T + margin, so the drift bound is not its.
    fn epsilon(&self) -> Option<Margin> {
        Some(Margin {
            field: "holder_margin",
            value: self.holder_margin,
            bounds_drift: false,
        })
    }

    /// These settings with each of Chubby's choices turned over: acting in jeopardy (the bug)
    /// and the master's way of answering KeepAlives; each labelled with what changed. The
    /// common lineup follows (Chubby is part of it).
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        let jeopardy = Self {
            act_in_jeopardy: !self.act_in_jeopardy,
            ..*self
        };
        let keepalive = Self {
            keepalive: match self.keepalive {
                KeepAliveMode::HeldOpen => KeepAliveMode::Immediate,
                KeepAliveMode::Immediate => KeepAliveMode::HeldOpen,
            },
            ..*self
        };
        let said = |what: String| format!("the scenario's settings, {what}");
        Some(vec![
            (
                jeopardy,
                said(format!("act_in_jeopardy: {}", jeopardy.act_in_jeopardy)),
            ),
            (
                keepalive,
                said(format!("keepalive: {:?}", keepalive.keepalive)),
            ),
        ])
    }

    /// Chubby's 45 s grace and held-open KeepAlives, with the margin `m`; the hold margin is
    /// 1 s, or T/4 if that is shorter.
    fn lineup(s: &Scenario, m: LocalDur, from: &str) -> Vec<(Self, String)> {
        let quarter = LocalDur::from_ns(s.lease.duration.ns() / 4);
        let session = ChubbySession {
            grace: grace(),
            lock_delay: LocalDur::ZERO,
            act_in_jeopardy: false,
            holder_margin: m,
            keepalive: KeepAliveMode::HeldOpen,
            hold_margin: hold_margin().min(quarter),
            extend_under_load: None,
        };
        vec![(session, format!("{from}; Chubby's 45 s grace"))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> ChubbySession {
        crate::scenario::ron_options().from_str(text).unwrap()
    }

    /// Every field is written, and what is written reads back; the defaults are Chubby's 45 s
    /// grace, held-open KeepAlives with a 1 s hold margin, no lock-delay and no margin.
    #[test]
    fn the_settings_are_written_whole_and_read_back() {
        let d = settings("ChubbySession()");
        assert_eq!(
            Settings::to_ron(&d),
            r#"ChubbySession(grace: "45s", lock_delay: "0s", act_in_jeopardy: false, holder_margin: "0s", keepalive: HeldOpen, hold_margin: "1s")"#
        );
        let text = r#"ChubbySession(grace: "5s", lock_delay: "60s", act_in_jeopardy: true, holder_margin: "200ms", keepalive: Immediate, hold_margin: "2s", extend_under_load: "20s")"#;
        let c = settings(text);
        assert_eq!(Settings::to_ron(&c), text);
        // The protocol describes itself by its settings.
        use crate::strategy::Protocol;
        assert_eq!(Settings::build(&c).describe(), text);
        let config = Settings::build(&c).config;
        assert_eq!((config.grace, config.lock_delay), (c.grace, c.lock_delay));
        assert!(config.act_in_jeopardy);
        assert_eq!(
            (config.holder_margin, config.hold_margin),
            (c.holder_margin, c.hold_margin)
        );
        assert_eq!(config.keepalive, KeepAliveMode::Immediate);
        assert_eq!(config.extend_under_load, Some(LocalDur::from_secs(20)));
    }

    /// The holder margin is the epsilon a sweep varies; it is not a grantor's drift bound.
    #[test]
    fn the_holder_margin_is_epsilon() {
        let c = settings(r#"ChubbySession(holder_margin: "300ms")"#);
        let m = Settings::epsilon(&c).expect("a margin");
        assert_eq!(
            (m.field, m.value, m.bounds_drift),
            ("holder_margin", LocalDur::from_ms(300), false)
        );
    }

    /// T = 12 s: the hold margin is 1 s (under T/4 = 3 s); T = 2 s: T/4 = 500 ms.
    #[test]
    fn the_lineup_holds_keepalives_open_with_a_margin_of_at_most_a_quarter_of_t() {
        let at = |t: &str| {
            let s = Scenario::from_ron(&format!(
                r#"Scenario(duration: "10s", lease: (duration: "{t}"), strategy: ChubbySession,
                    nodes: [(name: "m", role: Grantor), (name: "a", role: Contender)])"#
            ))
            .unwrap();
            ChubbySession::lineup(&s, LocalDur::from_ms(7), "from")[0].clone()
        };
        let (c, words) = at("12s");
        assert_eq!(c.hold_margin, LocalDur::from_secs(1));
        assert_eq!(
            (c.holder_margin, c.grace),
            (LocalDur::from_ms(7), LocalDur::from_secs(45))
        );
        assert_eq!(c.keepalive, KeepAliveMode::HeldOpen);
        assert_eq!(words, "from; Chubby's 45 s grace");
        assert_eq!(at("2s").0.hold_margin, LocalDur::from_ms(500));
    }

    /// Two clients, a KeepAlive each every 1 s with its timer and reply: 2 x 3 = 6 a second
    /// (the master is not a client).
    #[test]
    fn keepalives_of_every_client_are_counted() {
        let s = Scenario::from_ron(
            r#"Scenario(duration: "10s", lease: (duration: "3s", renew_every: "1s"),
                strategy: ChubbySession, nodes: [(name: "m", role: Grantor),
                (name: "a", role: Contender), (name: "b", role: Contender)])"#,
        )
        .unwrap();
        let c = ChubbySession::lineup(&s, LocalDur::ZERO, "")[0].0;
        assert_eq!(Settings::events_per_second(&c, &s), 6.0);
    }
}
