//! The schema builder's API (issue 9, item 4): list, open and save schemas
//! under `--schemas`, lint a schema for every provider, and compile its
//! `x-invariants`.
//!
//! - `GET /api/schemas`: `{"schemas": [{name, size, modified}], "writable"}`.
//! - `GET /api/schemas/{name}`: the schema (404 unknown, 400 bad name or
//!   not a regular file: a symlink, FIFO, folder or device, 413 over 1 MiB).
//! - `PUT /api/schemas/{name}[?overwrite=true]`: save the body (Note
//!   \[Saving a schema\]).
//! - `POST /api/lint` `{"schema"}`: [`report::lint_all`].
//! - `POST /api/invariants` `{"schema"}`: [`report::invariants`].
//!
//! PUT and POST pass the same-origin (or bearer) check of `auth` like every
//! state-changing request; lint and invariants change nothing but are POSTs
//! because they carry a body.
//!
//! Note \[Saving a schema\]: in order, each refusal a JSON `{"error"}` with
//! one line: no `--schemas` → 409 ("start serve with --schemas DIR to
//! save"); a bad name → 400 (Note \[Schema names\] in `files`); a body over
//! 1 MiB → 413; not JSON → 400; not a JSON Schema that `agentshape` can load
//! (the validator, `x-invariants` included) → 422; an existing file without
//! `overwrite=true` → 409 with `"exists": true` (the page asks and retries);
//! a symlink of that name → 400. Then the file is written atomically (Note
//! \[No writing through symlinks\] in `files`): 201 new, 200 replaced.

pub(crate) mod files;
mod report;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agentshape_core::validate::Validator;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State as AxState};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::State;
use crate::error::ApiError;
pub(crate) use files::Entry;
use files::{FileError, MAX_SCHEMA_BYTES, Saved};

/// The message when `serve` has no `--schemas` folder.
const NO_FOLDER: &str = "no schema folder: start serve with --schemas DIR to open and save schemas";

/// The routes under `/api/` this module answers.
pub(crate) fn routes() -> Router<Arc<State>> {
    Router::new()
        .route("/api/schemas", get(list))
        .route("/api/schemas/{name}", get(open).put(save))
        .route("/api/lint", post(lint))
        .route("/api/invariants", post(invariants))
        // The cap is checked while the body is read; one byte of slack for
        // the JSON wrapper of lint/invariants is not needed: 1 MiB is plenty.
        .layer(DefaultBodyLimit::max(MAX_SCHEMA_BYTES))
}

/// The schema files for the page's "Open" list: empty without `--schemas`
/// or when the folder cannot be read (the page says so; it never fails).
pub(crate) async fn entries(state: &Arc<State>) -> Result<Vec<Entry>, String> {
    let Some(dir) = state.schemas.clone() else {
        return Ok(Vec::new());
    };
    tokio::task::spawn_blocking(move || files::list(&dir))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

impl From<FileError> for ApiError {
    fn from(e: FileError) -> Self {
        let status = match &e {
            FileError::BadName(_) | FileError::Symlink(_) | FileError::NotRegular(..) => {
                StatusCode::BAD_REQUEST
            }
            FileError::Missing(_) => StatusCode::NOT_FOUND,
            FileError::Exists(_) => StatusCode::CONFLICT,
            FileError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            // The folder is not ours to write: say so rather than "internal error".
            FileError::Io { source, .. }
                if source.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                StatusCode::FORBIDDEN
            }
            FileError::Io { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

/// Run file work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, FileError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(ApiError::from)
}

/// Compiling and linting a schema of up to 1 MiB is CPU work: off the async
/// threads, so the SSE clients on the same two workers never wait on it.
async fn compute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

fn folder(state: &State) -> Result<PathBuf, ApiError> {
    state
        .schemas
        .clone()
        .ok_or_else(|| ApiError::new(StatusCode::CONFLICT, NO_FOLDER))
}

/// `GET /api/schemas`.
async fn list(AxState(state): AxState<Arc<State>>) -> Result<Response, ApiError> {
    let Some(dir) = state.schemas.clone() else {
        return Ok(Json(json!({ "schemas": [], "writable": false })).into_response());
    };
    let schemas = blocking(move || files::list(&dir)).await?;
    Ok(Json(json!({ "schemas": schemas, "writable": true })).into_response())
}

/// `GET /api/schemas/{name}`: the file as it is (422 when it is not JSON);
/// 404 without `--schemas` too (there is no such schema).
async fn open(
    AxState(state): AxState<Arc<State>>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    files::check_name(&name)?;
    let Some(dir) = state.schemas.clone() else {
        return Err(ApiError::new(StatusCode::NOT_FOUND, NO_FOLDER));
    };
    let key = name.clone();
    let bytes = blocking(move || files::read(&dir, &key)).await?;
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("`{name}` is not valid JSON: {e}"),
        ));
    }
    // The file's own bytes, not a re-serialised value: serde_json's map
    // sorts keys, and the form shows fields in the order the file has them.
    Ok(([(header::CONTENT_TYPE, "application/json")], bytes).into_response())
}

/// A body that could not be read: over the cap is 413, anything else 400.
fn bad_body(e: &BytesRejection) -> ApiError {
    let status = e.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::new(status, "the body is larger than 1 MiB");
    }
    ApiError::new(StatusCode::BAD_REQUEST, e.body_text())
}

/// `PUT /api/schemas/{name}`: see Note \[Saving a schema\].
async fn save(
    AxState(state): AxState<Arc<State>>,
    Path(name): Path<String>,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let dir = folder(&state)?;
    files::check_name(&name)?;
    let Query(q) = q.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.body_text()))?;
    let overwrite = match q.get("overwrite").map(String::as_str) {
        None | Some("false" | "0") => false,
        Some("true" | "1") => true,
        Some(_) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "overwrite must be true or false",
            ));
        }
    };
    let body = body.map_err(|e| bad_body(&e))?;
    let schema: Value = serde_json::from_slice(&body).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the body is not valid JSON: {e}"),
        )
    })?;
    compute(move || Validator::new(&schema).map(drop))
        .await?
        .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    let key = name.clone();
    let saved = tokio::task::spawn_blocking(move || files::save(&dir, &key, &body, overwrite))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    match saved {
        Ok(saved) => {
            let status = match saved {
                Saved::Created => StatusCode::CREATED,
                Saved::Replaced => StatusCode::OK,
            };
            Ok((
                status,
                Json(json!({ "saved": name, "replaced": saved == Saved::Replaced })),
            )
                .into_response())
        }
        // The page turns this one into a confirm dialog, so it says so.
        Err(e @ FileError::Exists(_)) => Ok((
            StatusCode::CONFLICT,
            Json(json!({ "error": e.to_string(), "exists": true })),
        )
            .into_response()),
        Err(e) => Err(e.into()),
    }
}

/// The `{"schema": ...}` body of lint and invariants.
fn schema_of(body: Result<Bytes, BytesRejection>) -> Result<Value, ApiError> {
    let body = body.map_err(|e| bad_body(&e))?;
    let mut v: Value = serde_json::from_slice(&body).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the body is not valid JSON: {e}"),
        )
    })?;
    match v.get_mut("schema").map(Value::take) {
        Some(schema @ (Value::Object(_) | Value::Bool(_))) => Ok(schema),
        _ => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "the body must be {\"schema\": <a JSON Schema object>}",
        )),
    }
}

/// `POST /api/lint`.
async fn lint(body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let schema = schema_of(body)?;
    Ok(Json(compute(move || report::lint_all(&schema)).await?).into_response())
}

/// `POST /api/invariants`.
async fn invariants(body: Result<Bytes, BytesRejection>) -> Result<Response, ApiError> {
    let schema = schema_of(body)?;
    Ok(Json(compute(move || report::invariants(&schema)).await?).into_response())
}
