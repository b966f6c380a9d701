//! What the server does with teams for a person (REST `/api/v1/teams`, `toolsmith team`) and
//! for a run (`TEAM.md`): make, list, read and delete a team, read its board and mailbox. The
//! service resolves agent names to [`Member`]s first; nothing here knows agent definitions.

use serde_json::{Value, json};
use toolsmith_core::data::{DataRecord, PutOutcome, RecordOrder, RecordQuery, RecordScope};

use super::{MESSAGES, Member, TASKS, TEAMS, Team, board_scope, board_tasks, message_view};
use crate::data::{Records, new_id};
use crate::utilities::Fail;

/// Most teams one user may have.
pub const MAX_TEAMS: usize = 100;
/// Most agents in one team, the lead included.
pub const MAX_MEMBERS: usize = 32;
/// Longest team description, in bytes.
pub const MAX_DESCRIPTION: usize = 4000;

/// A new team of `owner`: checked (name, a lead, teammates that are not the lead and appear
/// once), then stored; its name is unique among the owner's teams.
pub async fn create_team(
    records: &dyn Records,
    owner: &str,
    name: &str,
    description: &str,
    lead: Member,
    members: Vec<Member>,
) -> Result<Team, Fail> {
    toolsmith_core::name::validate_custom_name(name).map_err(|e| {
        Fail::Args(format!(
            "team name '{name}': {e} (lowercase letters, digits and _, starting with a letter)"
        ))
    })?;
    if description.len() > MAX_DESCRIPTION || description.contains('\0') {
        return Err(Fail::Args(format!(
            "description: at most {MAX_DESCRIPTION} bytes, without NUL characters"
        )));
    }
    if members.is_empty() {
        return Err(Fail::Args(
            "members: name at least one teammate besides the lead (your agents, by name or id)"
                .to_owned(),
        ));
    }
    if members.len() + 1 > MAX_MEMBERS {
        return Err(Fail::Args(format!(
            "members: a team has at most {MAX_MEMBERS} agents, the lead included"
        )));
    }
    let mut seen = vec![lead.id.as_str()];
    for m in &members {
        if seen.contains(&m.id.as_str()) {
            return Err(Fail::Args(format!(
                "members: '{}' appears twice (or is the lead): each agent is in a team once",
                m.name
            )));
        }
        seen.push(m.id.as_str());
    }
    if super::teams_of(records, owner).await?.len() >= MAX_TEAMS {
        return Err(Fail::Args(format!(
            "you already have {MAX_TEAMS} teams, the most allowed: delete one you no longer use"
        )));
    }
    let scope = RecordScope {
        owner: owner.to_owned(),
        agent: String::new(),
    };
    let member = |m: &Member| json!({"id": m.id, "name": m.name});
    let mut record = DataRecord::new(
        &scope,
        TEAMS,
        new_id("team"),
        json!({
            "name": name,
            "description": description,
            "lead": member(&lead),
            "members": members.iter().map(member).collect::<Vec<_>>(),
        }),
        format!("{name}\n{description}"),
    );
    record.dedup_key = Some(name.to_owned());
    match records.put(record).await? {
        PutOutcome::Inserted(stored) => Team::from_record(&stored)
            .ok_or_else(|| Fail::Run("the team was stored unreadable".to_owned())),
        PutOutcome::Duplicate(_) => Err(Fail::Args(format!(
            "you already have a team named '{name}': pick another name, or delete that one"
        ))),
    }
}

/// The owner's team `id_or_name`, if they have it.
pub async fn find_team(
    records: &dyn Records,
    owner: &str,
    id_or_name: &str,
) -> Result<Option<Team>, Fail> {
    Ok(super::teams_of(records, owner)
        .await?
        .into_iter()
        .find(|t| t.id == id_or_name || t.name == id_or_name))
}

/// Deletes `team` with its board and mailbox.
pub async fn delete_team(records: &dyn Records, team: &Team) -> Result<(), Fail> {
    let board = board_scope(&team.owner, &team.id);
    records.delete_collection(&board, TASKS).await?;
    records.delete_collection(&board, MESSAGES).await?;
    let scope = RecordScope {
        owner: team.owner.clone(),
        agent: String::new(),
    };
    records.delete(&scope, TEAMS, &team.id).await?;
    Ok(())
}

/// The team's board as a person reads it: every task (newest first) and the last `messages`
/// messages (newest first), read or not; reading them here marks none as read.
pub async fn board(records: &dyn Records, team: &Team, messages: u32) -> Result<Value, Fail> {
    let tasks = board_tasks(records, team).await?;
    let scope = board_scope(&team.owner, &team.id);
    let mail = records
        .query(&RecordQuery {
            owner: scope.owner,
            agent: scope.agent,
            collection: MESSAGES.to_owned(),
            order: RecordOrder::Newest,
            limit: messages,
            ..RecordQuery::default()
        })
        .await?;
    Ok(json!({
        "team": team.view(),
        "tasks": tasks.iter().map(|t| super::task_view(team, t)).collect::<Vec<_>>(),
        "messages": mail.iter().map(|h| message_view(team, &h.record)).collect::<Vec<_>>(),
    }))
}

/// `TEAM.md` for agent `agent` of `owner`: the teams it leads, each with its teammates and
/// how to work with them (§8: only the lead gets it; teammates learn on demand through the
/// tools and the messages they receive). `None` when it leads no team.
pub async fn team_md(
    records: &dyn Records,
    owner: &str,
    agent: &str,
) -> Result<Option<String>, Fail> {
    let led: Vec<Team> = super::teams_of(records, owner)
        .await?
        .into_iter()
        .filter(|t| t.lead.id == agent)
        .collect();
    if led.is_empty() {
        return Ok(None);
    }
    let mut text = String::new();
    for team in &led {
        text.push_str(&format!(
            "You lead the team '{}'{}.\nTeammates:\n",
            team.name,
            if team.description.is_empty() {
                String::new()
            } else {
                format!(" ({})", team.description)
            }
        ));
        for m in &team.members {
            text.push_str(&format!("- {} (agent id {})\n", m.name, m.id));
        }
        text.push('\n');
    }
    text.push_str(
        "How the team works: post the work as tasks on the board (team_tasks action create, \
         with blocked_by for what must come first); message a teammate (team_message send, or \
         broadcast to all) to have it claim a task; teammates claim tasks, work in parallel, \
         complete them with their results and message you; read your messages (team_message \
         read) and the board (team_tasks list filter all), then synthesize the results and \
         answer the user yourself.",
    );
    if led.len() > 1 {
        text.push_str(" You lead several teams: pass 'team' (its name) to the team tools.");
    }
    Ok(Some(text))
}
