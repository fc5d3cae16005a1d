//! The routes: JSON reads and the SSE feed. Every failure is a JSON
//! `{"error": ...}` with a 4xx for what the client got wrong; a 5xx only
//! when the store itself fails (503 while it is busy).

use std::sync::Arc;

use agentshape_store::query;
use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State as AxState};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::error::{ApiError, read};
use crate::{State, feed, pages};

/// A query string that does not parse (`limit=-1`, `after=x`): 400, as JSON.
fn bad_query(e: &QueryRejection) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, e.body_text())
}

/// `GET /api/sessions`: newest first, filtered (`status`, `tier`,
/// `profile`, `error_category`, `method`, `agent`, `project`, `q`, as on
/// the page); `next` is the `before` of the next page; with `q` (first
/// page), `transcript_hits` too (within the filters, newest line first)
/// and `hits_next`, the `hits_before` of the next hits (`hits_windowed`:
/// Note [Hits in time order]). Every matching
/// session is a row here, a sub-agent too (its `parent_id` names its
/// parent); the page nests them (Note [Sub-agents in a list] in the
/// store). A bad value (`tier=x`) is a 400.
pub(crate) async fn sessions(
    AxState(state): AxState<Arc<State>>,
    q: Result<Query<pages::sessions::ListParams>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| bad_query(&e))?;
    let limit = q.limit.unwrap_or(50).clamp(1, query::MAX_LIMIT);
    let bad = |m| ApiError::new(StatusCode::BAD_REQUEST, m);
    let filter = q.filter(limit).map_err(bad)?;
    let hits_before = q.hits_before().map_err(bad)?;
    // With `q`, the transcript lines holding it too (Note [Transcript
    // search], Note [Hits in time order] in the store's `query`), within
    // the other filters, on the first page only.
    let (rows, hits) = read(&state, move |s| {
        let hits = match filter.q.as_deref() {
            Some(q) if filter.before.is_none() => Some(query::search_hits(
                s,
                q,
                &filter,
                hits_before,
                pages::sessions::HITS,
            )?),
            _ => None,
        };
        Ok((query::sessions(s, &filter)?, hits))
    })
    .await?;
    let next = (rows.len() == limit)
        .then(|| rows.last().map(|r| r.id.clone()))
        .flatten();
    let mut body = serde_json::json!({ "sessions": rows, "next": next });
    if let Some(hits) = hits {
        let hits_next = (hits.hits.len() >= pages::sessions::HITS)
            .then(|| hits.hits.last().map(|h| h.feed_id))
            .flatten();
        body["transcript_hits"] = serde_json::to_value(&hits.hits).unwrap_or_default();
        body["hits_next"] = serde_json::json!(hits_next);
        body["hits_windowed"] = serde_json::json!(hits.windowed);
    }
    Ok(Json(body).into_response())
}

/// `GET /api/overview?range=&from=&to=`: what the overview page shows,
/// as of now: the dashboard's counts and lists, and `usage` (the range's
/// figures, named as core's `Figures`; `null` when the store holds no
/// model calls). A bad range is a 400.
pub(crate) async fn overview(
    AxState(state): AxState<Arc<State>>,
    q: Result<Query<pages::overview::RangeParams>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| bad_query(&e))?;
    let asked = q
        .asked()
        .map_err(|m| ApiError::new(StatusCode::BAD_REQUEST, m))?;
    let now = agentshape_store::time::now_ms();
    let o = read(&state, move |s| pages::overview::load(s, &asked, now)).await?;
    Ok(Json(o).into_response())
}

/// `GET /api/sessions/{id}?after=`: the session, its rows, output,
/// verdict, children and one page of its transcript (the session page's
/// data; Note \[Transcript pages\]); 404 for an unknown id, 400 for an id
/// that is not UTF-8 or a bad `after`.
pub(crate) async fn session(
    AxState(state): AxState<Arc<State>>,
    path: Result<Path<String>, PathRejection>,
    q: Result<Query<pages::session::PageParams>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Path(id) = path.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.body_text()))?;
    let Query(q) = q.map_err(|e| bad_query(&e))?;
    let after = q
        .after()
        .map_err(|m| ApiError::new(StatusCode::BAD_REQUEST, m))?;
    let key = id.clone();
    match read(&state, move |s| pages::session::load(s, &key, after)).await? {
        Some(loaded) => Ok(Json(loaded).into_response()),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no session `{id}`"),
        )),
    }
}

/// `GET /api/events?level=&after=&limit=`: newest first; `after` (an
/// event id) keeps only newer events. An unknown level is a 400.
pub(crate) async fn events(
    AxState(state): AxState<Arc<State>>,
    q: Result<Query<pages::events::EventsParams>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| bad_query(&e))?;
    let (level, after) = q
        .parse()
        .map_err(|m| ApiError::new(StatusCode::BAD_REQUEST, m))?;
    let limit = q.limit.unwrap_or(100);
    let rows = read(&state, move |s| {
        query::events(s, level.as_deref(), after, limit)
    })
    .await?;
    Ok(Json(serde_json::json!({ "events": rows })).into_response())
}

/// `GET /api/memories`: active first, most confident first.
pub(crate) async fn memories(AxState(state): AxState<Arc<State>>) -> Result<Response, ApiError> {
    let rows = read(&state, query::memories).await?;
    Ok(Json(serde_json::json!({ "memories": rows })).into_response())
}

#[derive(Debug, Deserialize)]
pub(crate) struct AlertsQuery {
    before: Option<i64>,
    limit: Option<usize>,
}

/// `GET /api/alerts?before=&limit=`: the Alerts page's firings, newest
/// first (at most 500), each with its deliveries (webhooks as
/// `scheme://host/path` only).
pub(crate) async fn alerts(
    AxState(state): AxState<Arc<State>>,
    q: Result<Query<AlertsQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.body_text()))?;
    let limit = q.limit.unwrap_or(crate::pages::ALERTS_PAGE);
    let rows = read(&state, move |s| {
        agentshape_store::alerts::firings(
            &agentshape_store::alerts::SourceRows(s),
            None,
            q.before,
            limit,
        )
    })
    .await?;
    Ok(Json(serde_json::json!({ "alerts": rows })).into_response())
}

#[derive(Debug, Deserialize)]
pub(crate) struct FeedQuery {
    after: Option<i64>,
}

/// How long a client refused by the feed cap is told to wait
/// (`Retry-After`, in seconds): an `EventSource` retries on its own
/// schedule anyway, a script can use this.
const FEED_RETRY_AFTER_SECS: u32 = 10;

/// `GET /api/feed`: SSE from after `Last-Event-ID` (a reconnecting
/// `EventSource` sends it, and it wins over the URL's `after`), else after
/// `?after=`, else only rows appended from now on.
///
/// Note \[Feed cap\]: each feed connection holds a little memory for as
/// long as it is open (Note \[Pull, not push\] in `feed`: one batch of
/// rows, 128 KiB plus one row at most) and a file descriptor, and nothing ends it
/// but the client. So at most [`Config::max_feed_clients`](crate::Config)
/// (256 by default, `--max-feed-clients`) are open at once; one more is
/// `503` with `Retry-After` and a JSON error, and is not counted. A place is
/// given back when the connection closes (the stream is dropped). 256 is
/// above the 200 clients of the load test (issue 9) and, at 128 KiB each,
/// bounds the feed's memory near 32 MiB.
pub(crate) async fn feed_sse(
    AxState(state): AxState<Arc<State>>,
    headers: HeaderMap,
    q: Result<Query<FeedQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = q.map_err(|e| bad_query(&e))?;
    let resume = match headers.get("last-event-id") {
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<i64>().ok())
                .filter(|n| *n >= 0)
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "Last-Event-ID must be a feed id (a non-negative integer)",
                    )
                })?,
        ),
        None => q.after,
    };
    if resume.is_some_and(|n| n < 0) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "after must be a non-negative integer",
        ));
    }
    let Ok(slot) = Arc::clone(&state.feed_slots).try_acquire_owned() else {
        let mut res = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the live feed already has {} connections, its cap (--max-feed-clients); retry later",
                state.max_feed_clients
            ),
        )
        .into_response();
        res.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(FEED_RETRY_AFTER_SECS),
        );
        return Ok(res);
    };
    let after = match resume {
        Some(n) => n,
        None => read(&state, query::feed_max_id).await?,
    };
    let follow = feed::Follow::new(Arc::clone(&state), after, Some(slot));
    Ok(Sse::new(feed::events(follow))
        .keep_alive(KeepAlive::new().interval(state.keep_alive))
        .into_response())
}
