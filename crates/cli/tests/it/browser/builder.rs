//! The schema builder in a real browser: a few clicks build the expected JSON
//! Schema in `#preview`, `#save` writes it into `--schemas`, and saving again
//! asks before overwriting (the dialog accepted through the driver).

use std::path::Path;
use std::time::{Duration, Instant};

use fantoccini::Locator;
use fantoccini::elements::Element;
use serde_json::{Value, json};

use super::{Browser, GUARD, serve};

/// Top-level `.field` elements (not nested in another `.field`), in order.
const TOP_FIELDS: &str = "//*[contains(concat(' ', normalize-space(@class), ' '), ' field ')]\
    [not(ancestor::*[contains(concat(' ', normalize-space(@class), ' '), ' field ')])]";

fn top_fields(browser: &Browser) -> Vec<Element> {
    browser
        .rt
        .block_on(browser.client().find_all(Locator::XPath(TOP_FIELDS)))
        .unwrap()
}

/// The control `css` inside top-level field `i` (found afresh each time: the
/// page may re-render a field when its type changes).
fn control(browser: &Browser, i: usize, css: &str) -> Element {
    let start = Instant::now();
    loop {
        if let Some(field) = top_fields(browser).get(i) {
            if let Ok(el) = browser.rt.block_on(field.find(Locator::Css(css))) {
                return el;
            }
        }
        assert!(start.elapsed() < GUARD, "no `{css}` in field {i}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn set_text(browser: &Browser, i: usize, css: &str, text: &str) {
    let el = control(browser, i, css);
    browser.type_into_el(&el, text);
}

fn set_type(browser: &Browser, i: usize, ty: &str) {
    let el = control(browser, i, "select.f-type");
    browser.select_el(&el, ty);
}

/// The preview without what a builder may add around the fields (`$schema`,
/// an empty title or description): everything else must match exactly.
fn core_of(preview: &Value) -> Value {
    let mut core = preview.clone();
    if let Some(obj) = core.as_object_mut() {
        obj.remove("$schema");
        for key in ["title", "description"] {
            if obj.get(key).is_some_and(|v| v == "") {
                obj.remove(key);
            }
        }
    }
    core
}

/// Poll `#preview` until it holds `want` (its properties in `want_keys`
/// order, compared parsed) and is exactly `JSON.stringify(schema, null, 2)`;
/// the preview parsed.
fn wait_preview(browser: &Browser, want_keys: &[&str], want: &Value) -> Value {
    let keys = serde_json::to_string(want_keys).unwrap();
    let script = format!(
        "const p = document.querySelector('#preview');
         if (!p) return 'no #preview';
         let s; try {{ s = JSON.parse(p.textContent); }} catch (e) {{ return 'not JSON: ' + p.textContent; }}
         if (p.textContent !== JSON.stringify(s, null, 2)) return 'not JSON.stringify(schema, null, 2): ' + p.textContent;
         const order = s && s.properties ? Object.keys(s.properties) : [];
         if (JSON.stringify(order) !== JSON.stringify({keys})) return 'properties in order ' + JSON.stringify(order);
         return {{ schema: s }};"
    );
    let start = Instant::now();
    loop {
        let got = browser.js(&script);
        if let Some(schema) = got.get("schema") {
            if core_of(schema) == *want {
                return schema.clone();
            }
        }
        assert!(
            start.elapsed() < GUARD,
            "#preview never became {want:#}\nlast: {got:#}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

#[test]
fn building_a_schema_with_clicks_previews_and_saves_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("builder.db");
    let schemas = dir.path().join("schemas");
    std::fs::create_dir(&schemas).unwrap();
    let server = serve(&db, &["--schemas", schemas.to_str().unwrap()]);
    let mut browser = Browser::open(&server.base);
    browser.goto("/builder");
    browser.find("#add-field");

    // Start from an empty form, whatever the page starts with.
    while let Some(field) = top_fields(&browser).first() {
        let remove = browser
            .rt
            .block_on(field.find(Locator::Css("button.f-remove")))
            .unwrap();
        let before = top_fields(&browser).len();
        browser.click_el(&remove);
        browser.wait_js(
            "a field removed",
            &format!(
                "return document.evaluate(\"count({TOP_FIELDS})\", document, null, XPathResult.NUMBER_TYPE, null).numberValue < {before};"
            ),
        );
    }
    let mode = browser.find("#mode");
    browser.select_el(&mode, "single");

    // Two fields: a required string with maxLength, an integer with minimum.
    browser.click("#add-field");
    browser.click("#add-field");
    assert_eq!(top_fields(&browser).len(), 2);
    set_type(&browser, 0, "string");
    set_text(&browser, 0, "input.f-name", "title");
    let required = control(&browser, 0, "input.f-required");
    if !browser.rt.block_on(required.is_selected()).unwrap() {
        browser.click_el(&required);
    }
    set_text(&browser, 0, "input.f-maxLength", "80");
    set_type(&browser, 1, "integer");
    set_text(&browser, 1, "input.f-name", "count");
    let required = control(&browser, 1, "input.f-required");
    if browser.rt.block_on(required.is_selected()).unwrap() {
        browser.click_el(&required);
    }
    set_text(&browser, 1, "input.f-minimum", "0");
    // An enum field, moved up above `count`.
    browser.click("#add-field");
    set_type(&browser, 2, "enum");
    set_text(&browser, 2, "input.f-name", "severity");
    set_text(&browser, 2, "input.f-enum", "low,high");
    let required = control(&browser, 2, "input.f-required");
    if browser.rt.block_on(required.is_selected()).unwrap() {
        browser.click_el(&required);
    }
    let up = control(&browser, 2, "button.f-up");
    browser.click_el(&up);

    let want = json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 80},
            "severity": {"type": "string", "enum": ["low", "high"]},
            "count": {"type": "integer", "minimum": 0}
        },
        "required": ["title"],
        "additionalProperties": false
    });
    let preview = wait_preview(&browser, &["title", "severity", "count"], &want);

    // Lint beside the preview: one `.provider` per provider.
    let providers = browser.wait_js(
        "#lint .provider",
        "const ps = Array.from(document.querySelectorAll('#lint .provider[data-provider][data-accepts]'));
         return ps.length > 0 ? ps.map((p) => [p.dataset.provider, p.dataset.accepts]) : null;",
    );
    for p in providers.as_array().unwrap() {
        assert!(
            p[1] == "true" || p[1] == "false",
            "data-accepts is a boolean: {providers}"
        );
    }

    // Save: the file in --schemas holds the preview.
    browser.type_into("#schema-name", "incident");
    browser.click("#save");
    browser.wait_js(
        "#save-status saved",
        "const s = document.querySelector('#save-status'); return s !== null && s.dataset.state === 'saved';",
    );
    let file = schemas.join("incident.json");
    assert_eq!(
        read_json(&file),
        Some(preview.clone()),
        "{}",
        file.display()
    );

    // Change it and save again: the page asks, the test accepts, it saves.
    set_text(&browser, 0, "input.f-description", "What happened");
    let mut want2 = want.clone();
    want2["properties"]["title"]["description"] = json!("What happened");
    let preview2 = wait_preview(&browser, &["title", "severity", "count"], &want2);
    // Cancel first: nothing is written, the page says the file exists.
    browser.click("#save");
    let asked = browser.dismiss_dialog("the overwrite confirmation");
    assert!(
        asked.contains("incident"),
        "the dialog names the schema: {asked:?}"
    );
    browser.wait_js(
        "#save-status exists",
        "const s = document.querySelector('#save-status'); return s !== null && s.dataset.state === 'exists';",
    );
    assert_eq!(
        read_json(&file),
        Some(preview.clone()),
        "a cancelled overwrite writes nothing"
    );
    // Then accept: it is overwritten.
    browser.click("#save");
    let asked = browser.accept_dialog("the overwrite confirmation");
    assert!(
        asked.contains("incident"),
        "the dialog names the schema: {asked:?}"
    );
    let start = Instant::now();
    while read_json(&file).as_ref() != Some(&preview2) {
        assert!(start.elapsed() < GUARD, "the overwrite was not saved");
        std::thread::sleep(Duration::from_millis(50));
    }
    browser.wait_js(
        "#save-status saved again",
        "const s = document.querySelector('#save-status'); return s !== null && s.dataset.state === 'saved';",
    );
    let names: Vec<String> = std::fs::read_dir(&schemas)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["incident.json"], "one file, no temp left");
    // The 409 that led to the question is the browser's network log, not a fault.
    let problems = browser.problems(&["status of 409"]);
    assert!(problems.is_empty(), "{problems:#?}");
}
