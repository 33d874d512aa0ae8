use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use opsd_core::{Caller, Clock, Limited, RateLimiter, RatePolicy, TeamId, ValidationErrors};
use serde_json::Value;
use uuid::Uuid;

use crate::chunks::UiChunk;
use crate::conversation::{ChatMessage, Conversation, Role};
use crate::ports::{
    LanguageModel, ModelError, ModelEvent, ModelMessage, ModelRequest, ThreadId, ThreadStore, ToolCall, Tools,
    UsageStore,
};

/// Model calls in one answer: the first, and up to four after tool results.
pub const MAX_STEPS: usize = 5;

/// A continued thread replays at most this many of its stored turns to the provider, and at most
/// this many characters of them, the most recent kept.
pub const REPLAYED_TURNS: usize = 40;
pub const REPLAYED_CHARS: usize = 32_000;

/// The sentence before the stable suffix; it never carries the provider's own text.
const ERROR_SENTENCE: &str = "The assistant could not complete this answer.";

const SYSTEM_PROMPT: &str = "You are the operations assistant of a restaurant team. Answer briefly and \
concretely. Use the tools to read the team's labor data, open incidents and schedules; never guess numbers.";

/// What one user and one team may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssistantLimits {
    /// Answers per user in any minute, across instances (`ASSISTANT_RATE_LIMIT_PER_MINUTE`).
    pub per_user_per_minute: u32,
    /// Tokens per team and UTC day (`ASSISTANT_DAILY_TOKENS_PER_TEAM`); `None` is no budget.
    pub daily_tokens_per_team: Option<u64>,
}

impl Default for AssistantLimits {
    fn default() -> Self {
        Self { per_user_per_minute: 20, daily_tokens_per_team: None }
    }
}

/// An unknown thread, or another user's, is `NotFound`.
pub type ChatError = opsd_core::ServiceError;

pub struct AssistantService {
    model: Option<Arc<dyn LanguageModel>>,
    tools: Arc<dyn Tools>,
    threads: Arc<dyn ThreadStore>,
    clock: Arc<dyn Clock>,
    limiter: Arc<dyn RateLimiter>,
    usage: Arc<dyn UsageStore>,
    limits: AssistantLimits,
}

/// The outside services an assistant needs besides the model: its tools, threads, clock, rate
/// limiter and usage ledger.
pub struct AssistantPorts {
    pub tools: Arc<dyn Tools>,
    pub threads: Arc<dyn ThreadStore>,
    pub clock: Arc<dyn Clock>,
    pub limiter: Arc<dyn RateLimiter>,
    pub usage: Arc<dyn UsageStore>,
}

fn error_chunk(error: &ModelError) -> UiChunk {
    UiChunk::Error { error_text: format!("{ERROR_SENTENCE} [{}]", error.suffix()) }
}

impl AssistantService {
    /// `model` is `None` when no provider is configured: every answer then carries `[provider_auth]`.
    pub fn new(model: Option<Arc<dyn LanguageModel>>, ports: AssistantPorts, limits: AssistantLimits) -> Self {
        let AssistantPorts { tools, threads, clock, limiter, usage } = ports;
        Self { model, tools, threads, clock, limiter, usage, limits }
    }

    /// Takes the body's parse result, so a caller without a team is refused before the body is
    /// judged. Checks the thread, records the user's message, and returns the thread and
    /// the answer as a stream of chunks. Provider failures become an error chunk in the stream,
    /// never an error here.
    /// A call that passed validation counts against the caller's limit; its outcome comes with
    /// the caller's quota after it.
    pub async fn chat(
        &self,
        caller: &Caller,
        conversation: Result<Conversation, ValidationErrors>,
    ) -> Result<Limited<Result<(ThreadId, BoxStream<'static, UiChunk>), ChatError>>, ChatError> {
        let team = caller.team_id()?.clone();
        let conversation = conversation?;
        let key = format!("assistant:{}", caller.user_id);
        let quota = self
            .limiter
            .hit(RatePolicy { name: "assistant", per_minute: self.limits.per_user_per_minute }, &key, self.clock.now())
            .await?
            .map_err(ChatError::RateLimited)?;
        Ok(Limited { value: self.converse(caller, team, conversation).await, quota })
    }

    async fn converse(
        &self,
        caller: &Caller,
        team: TeamId,
        Conversation { messages, thread }: Conversation,
    ) -> Result<(ThreadId, BoxStream<'static, UiChunk>), ChatError> {
        let (thread, messages) = match thread {
            Some(id) => {
                let thread = ThreadId(id);
                match self.threads.owner(thread).await? {
                    Some(owner) if owner == caller.user_id => {}
                    _ => return Err(ChatError::NotFound),
                }
                // The stored thread is the earlier exchange; of the client's messages only the
                // last is new (a stock client resends them all, and a client's copy is not trusted).
                let mut earlier = within_budget(self.threads.recent_turns(thread, REPLAYED_TURNS).await?);
                earlier.extend(messages.into_iter().last());
                (thread, earlier)
            }
            None => (self.threads.create(&caller.user_id, caller.team_id()?, self.clock.now()).await?, messages),
        };
        if let Some(last) = messages.last().filter(|m| m.role == Role::User) {
            self.threads.append(thread, Role::User, &last.content, self.clock.now()).await?;
        }
        let mut history = vec![ModelMessage::System(SYSTEM_PROMPT.to_owned())];
        history.extend(messages.into_iter().map(|m| match m.role {
            Role::User => ModelMessage::User(m.content),
            Role::Assistant => ModelMessage::Assistant { text: m.content, tool_calls: Vec::new() },
        }));
        let budget_spent = match self.limits.daily_tokens_per_team {
            Some(budget) => self.usage.used(&team, self.clock.now().date()).await? >= budget,
            None => false,
        };
        if budget_spent {
            tracing::info!(team = %team, "the team's daily assistant token budget is spent");
            return Ok((thread, refused(ModelError::OutputLimit)));
        }
        let answer = answer(
            self.model.clone(),
            self.tools.clone(),
            self.threads.clone(),
            self.usage.clone(),
            self.clock.clone(),
            caller.clone(),
            thread,
            history,
        );
        Ok((thread, answer))
    }
}

/// The most recent turns whose characters add up to at most `REPLAYED_CHARS`, oldest first.
fn within_budget(turns: Vec<ChatMessage>) -> Vec<ChatMessage> {
    let mut chars = 0;
    let kept = turns
        .iter()
        .rev()
        .take_while(|turn| {
            chars += turn.content.chars().count();
            chars <= REPLAYED_CHARS
        })
        .count();
    let skip = turns.len() - kept;
    turns.into_iter().skip(skip).collect()
}

/// An answer that is only its error part.
fn refused(error: ModelError) -> BoxStream<'static, UiChunk> {
    futures::stream::iter([
        UiChunk::Start { message_id: Uuid::now_v7().to_string() },
        UiChunk::StartStep,
        error_chunk(&error),
        UiChunk::FinishStep,
        UiChunk::Finish { finish_reason: "error" },
    ])
    .boxed()
}

/// Tokens of a step the provider did not count: about four characters a token.
fn estimated_tokens(history: &[ModelMessage], output: usize) -> u64 {
    let input: usize = history
        .iter()
        .map(|m| match m {
            ModelMessage::System(text) | ModelMessage::User(text) => text.len(),
            ModelMessage::Assistant { text, tool_calls } => {
                text.len() + tool_calls.iter().map(|c| c.arguments.len()).sum::<usize>()
            }
            ModelMessage::Tool { content, .. } => content.len(),
        })
        .sum();
    ((input + output) as u64).div_ceil(4)
}

#[allow(clippy::too_many_arguments)]
fn answer(
    model: Option<Arc<dyn LanguageModel>>,
    tools: Arc<dyn Tools>,
    threads: Arc<dyn ThreadStore>,
    usage: Arc<dyn UsageStore>,
    clock: Arc<dyn Clock>,
    caller: Caller,
    thread: ThreadId,
    mut history: Vec<ModelMessage>,
) -> BoxStream<'static, UiChunk> {
    async_stream::stream! {
        yield UiChunk::Start { message_id: Uuid::now_v7().to_string() };
        let mut spoken = String::new();
        let Some(model) = model else {
            yield UiChunk::StartStep;
            yield error_chunk(&ModelError::Auth);
            yield UiChunk::FinishStep;
            yield UiChunk::Finish { finish_reason: "error" };
            return;
        };
        for step in 0..MAX_STEPS {
            yield UiChunk::StartStep;
            let request = ModelRequest { messages: history.clone(), tools: tools.definitions() };
            let mut events = match model.stream(request).await {
                Ok(events) => events,
                Err(error) => {
                    yield error_chunk(&error);
                    yield UiChunk::FinishStep;
                    yield UiChunk::Finish { finish_reason: "error" };
                    return;
                }
            };
            let text_id = format!("text-{step}");
            let (mut text, mut calls, mut failure, mut counted) = (String::new(), Vec::<ToolCall>::new(), None, None);
            while let Some(event) = events.next().await {
                match event {
                    Ok(ModelEvent::Usage { total_tokens }) => counted = Some(total_tokens),
                    Ok(ModelEvent::TextDelta(delta)) => {
                        if text.is_empty() {
                            yield UiChunk::TextStart { id: text_id.clone() };
                        }
                        text.push_str(&delta);
                        yield UiChunk::TextDelta { id: text_id.clone(), delta };
                    }
                    Ok(ModelEvent::ToolCall(call)) => calls.push(call),
                    Ok(ModelEvent::Finished { reason }) if reason == "length" => failure = Some(ModelError::OutputLimit),
                    Ok(ModelEvent::Finished { .. }) => {}
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
            if !text.is_empty() {
                yield UiChunk::TextEnd { id: text_id.clone() };
                spoken.push_str(&text);
            }
            let tokens = counted.unwrap_or_else(|| estimated_tokens(&history, text.len()));
            if let (Some(team), true) = (caller.team_id().ok(), tokens > 0)
                && let Err(error) = usage.add(team, clock.now().date(), tokens).await
            {
                tracing::warn!(%error, "the assistant's token usage was not recorded");
            }
            if let Some(error) = failure {
                yield error_chunk(&error);
                yield UiChunk::FinishStep;
                yield UiChunk::Finish { finish_reason: "error" };
                return;
            }
            if calls.is_empty() {
                yield UiChunk::FinishStep;
                if !spoken.is_empty()
                    && let Err(error) = threads.append(thread, Role::Assistant, &spoken, clock.now()).await
                {
                    tracing::warn!(%error, "the assistant's answer was not stored in its thread");
                }
                yield UiChunk::Finish { finish_reason: "stop" };
                return;
            }
            history.push(ModelMessage::Assistant { text, tool_calls: calls.clone() });
            for call in calls {
                let input: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Object(Default::default()));
                yield UiChunk::ToolInputAvailable {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    input: input.clone(),
                    provider_executed: true,
                };
                match tools.call(&caller, &call.name, input).await {
                    Ok(output) => {
                        history.push(ModelMessage::Tool { call_id: call.id.clone(), content: output.to_string() });
                        yield UiChunk::ToolOutputAvailable { tool_call_id: call.id, output, provider_executed: true };
                    }
                    Err(message) => {
                        history.push(ModelMessage::Tool { call_id: call.id.clone(), content: format!("error: {message}") });
                        yield UiChunk::ToolOutputError { tool_call_id: call.id, error_text: message, provider_executed: true };
                    }
                }
            }
            yield UiChunk::FinishStep;
        }
        yield UiChunk::Finish { finish_reason: "tool-calls" };
    }
    .boxed()
}

#[cfg(test)]
mod tests {
    use opsd_core::{MockClock, Role as TeamRole, UserId};
    use opsd_core::{Quota, RateLimited};
    use serde_json::json;
    use time::OffsetDateTime;

    use super::*;
    use opsd_core::MockRateLimiter;

    use crate::ports::{MockLanguageModel, MockThreadStore, MockTools, MockUsageStore};

    fn caller() -> Caller {
        Caller::in_team("user_1", "org_1", TeamRole::Member)
    }

    fn clock() -> Arc<MockClock> {
        Arc::new(MockClock::fixed(OffsetDateTime::from_unix_timestamp(1_795_348_800).unwrap()))
    }

    fn threads() -> MockThreadStore {
        let mut threads = MockThreadStore::new();
        threads.expect_create().returning(|_, _, _| Ok(ThreadId(Uuid::nil())));
        threads.expect_append().returning(|_, _, _, _| Ok(()));
        threads
    }

    fn allow_all() -> MockRateLimiter {
        let mut limiter = MockRateLimiter::new();
        limiter.expect_hit().returning(|policy, _, _| Ok(Ok(Quota::per_minute(policy, policy.per_minute - 1, 60))));
        limiter
    }

    fn no_usage() -> MockUsageStore {
        let mut usage = MockUsageStore::new();
        usage.expect_used().returning(|_, _| Ok(0));
        usage.expect_add().returning(|_, _, _| Ok(()));
        usage
    }

    fn service_with(
        model: Option<Arc<dyn LanguageModel>>,
        tools: MockTools,
        threads: MockThreadStore,
    ) -> AssistantService {
        let ports = AssistantPorts {
            tools: Arc::new(tools),
            threads: Arc::new(threads),
            clock: clock(),
            limiter: Arc::new(allow_all()),
            usage: Arc::new(no_usage()),
        };
        AssistantService::new(model, ports, AssistantLimits::default())
    }

    fn tools() -> MockTools {
        let mut tools = MockTools::new();
        tools.expect_definitions().returning(Vec::new);
        tools
    }

    fn said(role: Role, content: &str) -> ChatMessage {
        ChatMessage { role, content: content.into() }
    }

    fn request() -> Result<Conversation, ValidationErrors> {
        Ok(Conversation { messages: vec![said(Role::User, "How many open incidents?")], thread: None })
    }

    fn events(list: Vec<Result<ModelEvent, ModelError>>) -> crate::ports::ModelStream {
        futures::stream::iter(list).boxed()
    }

    fn types(chunks: &[UiChunk]) -> Vec<String> {
        chunks.iter().map(|c| serde_json::to_value(c).unwrap()["type"].as_str().unwrap().to_owned()).collect()
    }

    async fn run(model: MockLanguageModel, tools: MockTools) -> Vec<UiChunk> {
        let service = service_with(Some(Arc::new(model)), tools, threads());
        let (_, stream) = service.chat(&caller(), request()).await.unwrap().value.unwrap();
        stream.collect().await
    }

    #[tokio::test]
    async fn a_tool_call_then_text_makes_two_steps() {
        let mut model = MockLanguageModel::new();
        let mut step = 0;
        model.expect_stream().times(2).returning(move |request| {
            step += 1;
            Ok(if step == 1 {
                events(vec![Ok(ModelEvent::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "open_incidents".into(),
                    arguments: "{\"locationId\":\"x\"}".into(),
                }))])
            } else {
                assert!(
                    matches!(request.messages.last(), Some(ModelMessage::Tool { content, .. }) if content.contains("2"))
                );
                events(vec![
                    Ok(ModelEvent::TextDelta("Two ".into())),
                    Ok(ModelEvent::TextDelta("open.".into())),
                    Ok(ModelEvent::Finished { reason: "stop".into() }),
                ])
            })
        });
        let mut tools = tools();
        tools.expect_call().returning(|_, _, _| Ok(json!({ "count": 2 })));
        let chunks = run(model, tools).await;
        assert_eq!(
            types(&chunks),
            [
                "start",
                "start-step",
                "tool-input-available",
                "tool-output-available",
                "finish-step",
                "start-step",
                "text-start",
                "text-delta",
                "text-delta",
                "text-end",
                "finish-step",
                "finish"
            ]
        );
    }

    #[tokio::test]
    async fn a_provider_failure_mid_stream_ends_with_the_classified_error_part() {
        let mut model = MockLanguageModel::new();
        model
            .expect_stream()
            .returning(|_| Ok(events(vec![Ok(ModelEvent::TextDelta("Hal".into())), Err(ModelError::Network)])));
        let chunks = run(model, tools()).await;
        assert_eq!(
            types(&chunks),
            ["start", "start-step", "text-start", "text-delta", "text-end", "error", "finish-step", "finish"]
        );
        assert_eq!(
            chunks[5],
            UiChunk::Error { error_text: "The assistant could not complete this answer. [provider_network]".into() }
        );
    }

    #[tokio::test]
    async fn an_output_limit_and_a_missing_provider_have_their_suffixes() {
        let mut model = MockLanguageModel::new();
        model.expect_stream().returning(|_| {
            Ok(events(vec![
                Ok(ModelEvent::TextDelta("x".into())),
                Ok(ModelEvent::Finished { reason: "length".into() }),
            ]))
        });
        let chunks = run(model, tools()).await;
        assert!(
            matches!(&chunks[chunks.len() - 3], UiChunk::Error { error_text } if error_text.ends_with("[output_limit]"))
        );

        let service = service_with(None, tools(), threads());
        let chunks: Vec<UiChunk> = service.chat(&caller(), request()).await.unwrap().value.unwrap().1.collect().await;
        assert!(
            chunks
                .iter()
                .any(|c| matches!(c, UiChunk::Error { error_text } if error_text.ends_with("[provider_auth]")))
        );
    }

    #[tokio::test]
    async fn a_model_that_keeps_calling_tools_stops_after_five_steps() {
        let mut model = MockLanguageModel::new();
        model.expect_stream().times(MAX_STEPS).returning(|_| {
            Ok(events(vec![Ok(ModelEvent::ToolCall(ToolCall {
                id: "c".into(),
                name: "open_incidents".into(),
                arguments: "{}".into(),
            }))]))
        });
        let mut tools = tools();
        tools.expect_call().returning(|_, _, _| Err("no such location".into()));
        let chunks = run(model, tools).await;
        assert_eq!(chunks.last(), Some(&UiChunk::Finish { finish_reason: "tool-calls" }));
    }

    #[tokio::test]
    async fn a_continued_thread_gives_the_provider_its_stored_turns_then_the_new_message() {
        let mut threads = MockThreadStore::new();
        threads.expect_owner().returning(|_| Ok(Some(UserId::new("user_1"))));
        threads.expect_recent_turns().withf(|_, limit| *limit == REPLAYED_TURNS).returning(|_, _| {
            Ok(vec![
                ChatMessage { role: Role::User, content: "How many open incidents?".into() },
                ChatMessage { role: Role::Assistant, content: "Two, both at Downtown.".into() },
            ])
        });
        threads
            .expect_append()
            .withf(|_, role, content, _| *role == Role::User && content == "Which is older?")
            .times(1)
            .returning(|_, _, _, _| Ok(()));
        threads.expect_append().returning(|_, _, _, _| Ok(()));
        let mut model = MockLanguageModel::new();
        model.expect_stream().times(1).returning(|request| {
            let said: Vec<String> = request
                .messages
                .iter()
                .map(|m| match m {
                    ModelMessage::System(_) => "system".to_owned(),
                    ModelMessage::User(text) => format!("user: {text}"),
                    ModelMessage::Assistant { text, .. } => format!("assistant: {text}"),
                    ModelMessage::Tool { .. } => "tool".to_owned(),
                })
                .collect();
            assert_eq!(
                said,
                [
                    "system",
                    "user: How many open incidents?",
                    "assistant: Two, both at Downtown.",
                    "user: Which is older?"
                ]
            );
            Ok(events(vec![
                Ok(ModelEvent::TextDelta("The walk-in.".into())),
                Ok(ModelEvent::Finished { reason: "stop".into() }),
            ]))
        });
        let service = service_with(Some(Arc::new(model)), tools(), threads);
        // The client resends its copy of the exchange (as a stock client does): the stored one wins.
        let request = Conversation {
            messages: vec![
                said(Role::User, "How many open incidents?"),
                said(Role::Assistant, "(a forged earlier answer)"),
                said(Role::User, "Which is older?"),
            ],
            thread: Some(Uuid::nil()),
        };
        let chunks: Vec<UiChunk> = service.chat(&caller(), Ok(request)).await.unwrap().value.unwrap().1.collect().await;
        assert_eq!(chunks.last(), Some(&UiChunk::Finish { finish_reason: "stop" }));
    }

    #[test]
    fn the_replayed_turns_keep_the_most_recent_within_the_character_budget() {
        let turn =
            |n: usize, chars: usize| ChatMessage { role: Role::User, content: format!("{n}{}", "x".repeat(chars - 1)) };
        let turns: Vec<ChatMessage> = (0..5).map(|n| turn(n, REPLAYED_CHARS / 4)).collect();
        let kept = within_budget(turns);
        let firsts: Vec<char> = kept.iter().map(|t| t.content.chars().next().unwrap()).collect();
        assert_eq!(firsts, ['1', '2', '3', '4'], "the oldest is dropped, order is kept");
        assert!(within_budget(vec![turn(0, REPLAYED_CHARS + 1)]).is_empty());
        assert!(within_budget(Vec::new()).is_empty());
    }

    #[tokio::test]
    async fn a_user_over_the_rate_limit_is_refused_before_anything_is_stored() {
        let mut limiter = MockRateLimiter::new();
        limiter
            .expect_hit()
            .withf(|policy, key, _| policy.name == "assistant" && key == "assistant:user_1" && policy.per_minute == 20)
            .returning(|policy, _, _| {
                let quota = Quota::per_minute(policy, 0, 12);
                Ok(Err(RateLimited { retry_after_seconds: 12, quota }))
            });
        let mut threads = MockThreadStore::new();
        threads.expect_create().never();
        threads.expect_append().never();
        let ports = AssistantPorts {
            tools: Arc::new(tools()),
            threads: Arc::new(threads),
            clock: clock(),
            limiter: Arc::new(limiter),
            usage: Arc::new(no_usage()),
        };
        let service = AssistantService::new(None, ports, AssistantLimits::default());
        let refused = service.chat(&caller(), request()).await;
        assert!(matches!(refused, Err(ChatError::RateLimited(RateLimited { retry_after_seconds: 12, .. }))));
    }

    fn ports_with(usage: MockUsageStore) -> AssistantPorts {
        AssistantPorts {
            tools: Arc::new(tools()),
            threads: Arc::new(threads()),
            clock: clock(),
            limiter: Arc::new(allow_all()),
            usage: Arc::new(usage),
        }
    }

    #[tokio::test]
    async fn a_spent_daily_budget_answers_the_output_limit_part_and_usage_is_recorded() {
        let mut usage = MockUsageStore::new();
        usage.expect_used().returning(|team, _| Ok(if team.as_str() == "org_1" { 1_000 } else { 0 }));
        usage.expect_add().never();
        let mut model = MockLanguageModel::new();
        model.expect_stream().never();
        let ports = ports_with(usage);
        let limits = AssistantLimits { per_user_per_minute: 20, daily_tokens_per_team: Some(1_000) };
        let service = AssistantService::new(Some(Arc::new(model)), ports, limits);
        let chunks: Vec<UiChunk> = service.chat(&caller(), request()).await.unwrap().value.unwrap().1.collect().await;
        assert_eq!(types(&chunks), ["start", "start-step", "error", "finish-step", "finish"]);
        assert!(matches!(&chunks[2], UiChunk::Error { error_text } if error_text.ends_with("[output_limit]")));

        // Under the budget, each step's counted tokens are recorded against the team and day.
        let mut usage = MockUsageStore::new();
        usage.expect_used().returning(|_, _| Ok(999));
        usage
            .expect_add()
            .withf(|team, _, tokens| team.as_str() == "org_1" && *tokens == 42)
            .times(1)
            .returning(|_, _, _| Ok(()));
        let mut model = MockLanguageModel::new();
        model.expect_stream().returning(|_| {
            Ok(events(vec![
                Ok(ModelEvent::TextDelta("Two.".into())),
                Ok(ModelEvent::Usage { total_tokens: 42 }),
                Ok(ModelEvent::Finished { reason: "stop".into() }),
            ]))
        });
        let ports = ports_with(usage);
        let service = AssistantService::new(Some(Arc::new(model)), ports, limits);
        let chunks: Vec<UiChunk> = service.chat(&caller(), request()).await.unwrap().value.unwrap().1.collect().await;
        assert_eq!(chunks.last(), Some(&UiChunk::Finish { finish_reason: "stop" }));
    }

    #[tokio::test]
    async fn only_the_owner_continues_a_thread() {
        let mut threads = MockThreadStore::new();
        threads.expect_owner().returning(|_| Ok(Some(UserId::new("user_2"))));
        threads.expect_append().never();
        let service = service_with(None, tools(), threads);
        let request = Conversation { messages: vec![said(Role::User, "hi")], thread: Some(Uuid::nil()) };
        assert!(matches!(service.chat(&caller(), Ok(request)).await.unwrap().value, Err(ChatError::NotFound)));
    }
}
