//! The compiled [`Policy`] and its decisions: deny first and always, then `also_allow`, then
//! profile and allow lists.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::entry::{Entry, ToolSet};
use crate::{Caller, ToolInfo};

/// A checked, resolved policy, ready to decide.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `None`: no policy configured, everything is allowed.
    rules: Option<Rules>,
}

/// The outcome of [`Policy::decide`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub allowed: bool,
    /// Why, for people: "denied by deny entry 'group:custom' of agent 'x'".
    pub reason: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Rules {
    pub(crate) global: Scope,
    pub(crate) users: BTreeMap<String, Scope>,
    pub(crate) agents: BTreeMap<String, Scope>,
    pub(crate) always_deny: Vec<Entry>,
    pub(crate) leaf_deny: Vec<Entry>,
    pub(crate) max_depth: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct Scope {
    /// "the global policy", "user 'bob'", "agent 'x'".
    pub(crate) label: String,
    pub(crate) profile: Option<Profile>,
    pub(crate) allow: Vec<Entry>,
    pub(crate) deny: Vec<Entry>,
    pub(crate) also_allow: Vec<Entry>,
}

#[derive(Debug, Clone)]
pub(crate) struct Profile {
    pub(crate) name: String,
    pub(crate) set: ToolSet,
}

/// A decision before it is put into words; cheap enough for filtering thousands of tools.
enum Verdict<'p> {
    NoPolicy,
    TooDeep {
        depth: u32,
        max_depth: u32,
    },
    Denied {
        entry: &'p str,
        source: Source<'p>,
    },
    AlsoAllowed {
        entry: &'p str,
        scope: &'p str,
    },
    NotInProfile {
        profile: &'p str,
        scope: &'p str,
    },
    NotInAllowList {
        scope: &'p str,
    },
    Allowed {
        profile: Option<(&'p str, &'p str)>,
        n_allow_lists: usize,
    },
}

enum Source<'p> {
    Scope(&'p str),
    AlwaysDeny { depth: u32 },
    LeafDeny { depth: u32 },
}

impl Policy {
    /// The policy of a server with no policy configured: every tool is allowed.
    #[must_use]
    pub fn allow_all() -> Self {
        Self { rules: None }
    }

    pub(crate) fn from_rules(rules: Rules) -> Self {
        Self { rules: Some(rules) }
    }

    /// Whether `caller` may see and call `tool`, and why.
    #[must_use]
    pub fn decide(&self, caller: &Caller<'_>, tool: &ToolInfo<'_>) -> Decision {
        let verdict = self.verdict(caller, tool);
        Decision {
            allowed: verdict.allowed(),
            reason: verdict.to_string(),
        }
    }

    /// Whether `caller` may see and call `tool`, without the reason.
    #[must_use]
    pub fn allows(&self, caller: &Caller<'_>, tool: &ToolInfo<'_>) -> bool {
        self.verdict(caller, tool).allowed()
    }

    /// Why `caller` may not use `name`, something that is not a tool but a capability a
    /// running tool asks for (`mcp:sampling`, `mcp:elicitation`): the first deny entry that
    /// names it exactly — in the global, user or agent deny lists, or the subagent lists at
    /// the caller's depth — or a caller deeper than `subagents.max_depth`. `None` when nothing
    /// denies it. Only an entry naming it counts: `*`, groups, profiles and allow lists are
    /// about tools, so a policy that does not mention a capability leaves it allowed.
    #[must_use]
    pub fn denies_by_name(&self, caller: &Caller<'_>, name: &str) -> Option<String> {
        let rules = self.rules.as_ref()?;
        if caller.depth > rules.max_depth {
            let verdict = Verdict::TooDeep {
                depth: caller.depth,
                max_depth: rules.max_depth,
            };
            return Some(verdict.to_string());
        }
        let named = |entries: &'_ [Entry]| -> Option<String> {
            entries
                .iter()
                .find(|entry| entry.text == name)
                .map(|entry| entry.text.clone())
        };
        let mut found: Option<(String, Source<'_>)> = None;
        for scope in rules.scopes(caller) {
            if let Some(entry) = named(&scope.deny) {
                found = Some((entry, Source::Scope(&scope.label)));
                break;
            }
        }
        if found.is_none() && caller.depth >= 1 {
            if let Some(entry) = named(&rules.always_deny) {
                found = Some((
                    entry,
                    Source::AlwaysDeny {
                        depth: caller.depth,
                    },
                ));
            } else if caller.depth >= rules.max_depth
                && let Some(entry) = named(&rules.leaf_deny)
            {
                found = Some((
                    entry,
                    Source::LeafDeny {
                        depth: caller.depth,
                    },
                ));
            }
        }
        let (entry, source) = found?;
        Some(
            Verdict::Denied {
                entry: &entry,
                source,
            }
            .to_string(),
        )
    }

    /// The items whose tool `caller` may see, in their order.
    pub fn filter<T>(
        &self,
        caller: &Caller<'_>,
        items: impl IntoIterator<Item = T>,
        info: impl for<'t> Fn(&'t T) -> ToolInfo<'t>,
    ) -> Vec<T> {
        items
            .into_iter()
            .filter(|item| self.allows(caller, &info(item)))
            .collect()
    }

    fn verdict<'p>(&'p self, caller: &Caller<'_>, tool: &ToolInfo<'_>) -> Verdict<'p> {
        let Some(rules) = &self.rules else {
            return Verdict::NoPolicy;
        };
        if caller.depth > rules.max_depth {
            return Verdict::TooDeep {
                depth: caller.depth,
                max_depth: rules.max_depth,
            };
        }
        let scopes = rules.scopes(caller);
        // 1. Deny always wins.
        for scope in &scopes {
            if let Some(entry) = first_match(&scope.deny, tool) {
                return Verdict::Denied {
                    entry,
                    source: Source::Scope(&scope.label),
                };
            }
        }
        if caller.depth >= 1 {
            if let Some(entry) = first_match(&rules.always_deny, tool) {
                return Verdict::Denied {
                    entry,
                    source: Source::AlwaysDeny {
                        depth: caller.depth,
                    },
                };
            }
            if caller.depth >= rules.max_depth
                && let Some(entry) = first_match(&rules.leaf_deny, tool)
            {
                return Verdict::Denied {
                    entry,
                    source: Source::LeafDeny {
                        depth: caller.depth,
                    },
                };
            }
        }
        // 2. also_allow adds.
        for scope in &scopes {
            if let Some(entry) = first_match(&scope.also_allow, tool) {
                return Verdict::AlsoAllowed {
                    entry,
                    scope: &scope.label,
                };
            }
        }
        // 3. The most specific profile, then every non-empty allow list, narrow.
        let profile = scopes
            .iter()
            .rev()
            .find_map(|scope| scope.profile.as_ref().map(|p| (p, scope.label.as_str())));
        if let Some((profile, scope)) = profile
            && !profile.set.contains(tool)
        {
            return Verdict::NotInProfile {
                profile: &profile.name,
                scope,
            };
        }
        let mut n_allow_lists = 0;
        for scope in scopes.iter().filter(|scope| !scope.allow.is_empty()) {
            if first_match(&scope.allow, tool).is_none() {
                return Verdict::NotInAllowList {
                    scope: &scope.label,
                };
            }
            n_allow_lists += 1;
        }
        Verdict::Allowed {
            profile: profile.map(|(p, scope)| (p.name.as_str(), scope)),
            n_allow_lists,
        }
    }
}

impl Rules {
    /// The scopes that apply to `caller`, widest first: global, user, agent.
    fn scopes(&self, caller: &Caller<'_>) -> Vec<&Scope> {
        let mut res = vec![&self.global];
        res.extend(self.users.get(caller.user));
        res.extend(caller.agent.and_then(|agent| self.agents.get(agent)));
        res
    }
}

fn first_match<'p>(entries: &'p [Entry], tool: &ToolInfo<'_>) -> Option<&'p str> {
    entries
        .iter()
        .find(|entry| entry.set.contains(tool))
        .map(|entry| entry.text.as_str())
}

impl Verdict<'_> {
    fn allowed(&self) -> bool {
        matches!(
            self,
            Self::NoPolicy | Self::AlsoAllowed { .. } | Self::Allowed { .. }
        )
    }
}

impl fmt::Display for Verdict<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoPolicy => write!(f, "allowed: no policy is configured"),
            Self::TooDeep { depth, max_depth } => {
                write!(
                    f,
                    "denied: subagent depth {depth} exceeds subagents.max_depth {max_depth}"
                )
            }
            Self::Denied {
                entry,
                source: Source::Scope(scope),
            } => write!(f, "denied by deny entry '{entry}' of {scope}"),
            Self::Denied {
                entry,
                source: Source::AlwaysDeny { depth },
            } => {
                write!(
                    f,
                    "denied by subagents.always_deny entry '{entry}' (subagent depth {depth})"
                )
            }
            Self::Denied {
                entry,
                source: Source::LeafDeny { depth },
            } => {
                write!(
                    f,
                    "denied by subagents.leaf_deny entry '{entry}' (subagent depth {depth} is the deepest allowed)"
                )
            }
            Self::AlsoAllowed { entry, scope } => {
                write!(f, "allowed by also_allow entry '{entry}' of {scope}")
            }
            Self::NotInProfile { profile, scope } => {
                write!(f, "denied: not in profile '{profile}' of {scope}")
            }
            Self::NotInAllowList { scope } => write!(f, "denied: not in the allow list of {scope}"),
            Self::Allowed {
                profile,
                n_allow_lists,
            } => {
                match profile {
                    Some((name, scope)) => write!(f, "allowed by profile '{name}' of {scope}")?,
                    None => write!(f, "allowed by the default profile 'full'")?,
                }
                if *n_allow_lists > 0 {
                    write!(f, " and {n_allow_lists} allow list(s)")?;
                }
                Ok(())
            }
        }
    }
}
