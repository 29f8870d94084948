//! The role counts a lock service checks in [`Protocol::check`](super::Protocol::check): its
//! Grantors, at least one Contender and no Replica, each problem said once, in the words of the
//! protocol (what a Grantor and a Contender are in it).

use crate::scenario::{Role, Scenario};

/// How many Grantors a lock service takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grantors {
    /// One lock server, master or API server.
    ExactlyOne,
    /// Any number from one: Redlock's independent masters.
    AtLeastOne,
}

/// A lock service's roles, to check a scenario's nodes against.
#[derive(Clone, Copy, Debug)]
pub struct LockServiceRoles<'a> {
    /// The protocol's name, as problems start with it ("the base protocol", "Redlock").
    pub protocol: &'a str,
    pub grantors: Grantors,
    /// What a Grantor is in this protocol ("the API server"), or "" to say nothing.
    pub grantor_is: &'a str,
    /// What a Contender is in this protocol ("a candidate"), or "" to say nothing.
    pub contender_is: &'a str,
}

impl LockServiceRoles<'_> {
    /// Every problem with the scenario's roles, in the order grantors, contenders, replicas.
    pub fn check(&self, scenario: &Scenario) -> Vec<String> {
        let count = |role| scenario.nodes.iter().filter(|n| n.role == role).count();
        let p = self.protocol;
        let mut problems = Vec::new();
        let grantors = count(Role::Grantor);
        match self.grantors {
            Grantors::ExactlyOne if grantors != 1 => problems.push(format!(
                "nodes: {p} needs exactly one Grantor{} (found {grantors})",
                apposition(self.grantor_is)
            )),
            Grantors::AtLeastOne if grantors == 0 => problems.push(format!(
                "nodes: {p} needs at least one Grantor{}",
                parenthesis(self.grantor_is)
            )),
            _ => {}
        }
        if count(Role::Contender) == 0 {
            problems.push(format!(
                "nodes: {p} needs at least one Contender{}",
                parenthesis(self.contender_is)
            ));
        }
        if count(Role::Replica) > 0 {
            let takes = match self.grantors {
                Grantors::ExactlyOne => format!("one Grantor{},", apposition(self.grantor_is)),
                Grantors::AtLeastOne => "Grantors".to_string(),
            };
            problems.push(format!(
                "nodes: {p} has no Replica role (it takes {takes} and Contenders)"
            ));
        }
        problems
    }
}

/// ", the API server", or nothing.
fn apposition(what: &str) -> String {
    if what.is_empty() {
        String::new()
    } else {
        format!(", {what}")
    }
}

/// " (a client)", or nothing.
fn parenthesis(what: &str) -> String {
    if what.is_empty() {
        String::new()
    } else {
        format!(" ({what})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(roles: &[&str]) -> Scenario {
        let nodes: Vec<String> = roles
            .iter()
            .enumerate()
            .map(|(i, r)| format!(r#"(name: "n{i}", role: {r})"#))
            .collect();
        let text = format!(
            r#"Scenario(duration: "1s", lease: (duration: "1s"), strategy: TwoSided, nodes: [{}])"#,
            nodes.join(", ")
        );
        Scenario::from_ron(&text).expect("a valid scenario")
    }

    const K8S: LockServiceRoles = LockServiceRoles {
        protocol: "K8sLeaderElection",
        grantors: Grantors::ExactlyOne,
        grantor_is: "the API server",
        contender_is: "a candidate",
    };

    #[test]
    fn one_grantor_and_contenders_pass() {
        assert!(K8S.check(&nodes(&["Grantor", "Contender"])).is_empty());
    }

    #[test]
    fn every_problem_is_named_in_the_protocol_s_words() {
        assert_eq!(
            K8S.check(&nodes(&["Grantor", "Grantor", "Replica"])),
            [
                "nodes: K8sLeaderElection needs exactly one Grantor, the API server (found 2)",
                "nodes: K8sLeaderElection needs at least one Contender (a candidate)",
                "nodes: K8sLeaderElection has no Replica role (it takes one Grantor, the API \
                 server, and Contenders)",
            ]
        );
        let redlock = LockServiceRoles {
            protocol: "Redlock",
            grantors: Grantors::AtLeastOne,
            grantor_is: "a Redis master",
            contender_is: "",
        };
        assert!(redlock
            .check(&nodes(&["Grantor", "Grantor", "Contender"]))
            .is_empty());
        assert_eq!(
            redlock.check(&nodes(&["Replica"])),
            [
                "nodes: Redlock needs at least one Grantor (a Redis master)",
                "nodes: Redlock needs at least one Contender",
                "nodes: Redlock has no Replica role (it takes Grantors and Contenders)",
            ]
        );
    }
}
