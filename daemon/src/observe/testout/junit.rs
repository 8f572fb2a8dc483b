//! JUnit XML, as written by pytest, Vitest, Jest (jest-junit), Playwright, Surefire,
//! Gradle, nextest, go-junit-report and most CI tools: counted from the `testcase`
//! elements, whatever the suites' own attributes say.

use super::{failure, Run};
use ccmem_proto::model::environment::{TestFailure, TestSuite};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

#[derive(Default)]
struct Case {
    name: String,
    class: String,
    file: String,
    line: Option<u32>,
    outcome: Outcome,
    message: String,
    text: String,
}

#[derive(Default, PartialEq)]
enum Outcome {
    #[default]
    Passed,
    Failed,
    Skipped,
}

/// Reads a JUnit report. `framework` names the runner when the report does not (its root
/// `testsuites name="vitest tests"` often does).
pub fn parse(xml: &str, framework: Option<&str>) -> Result<Run, String> {
    let mut reader = Reader::from_str(xml);
    let mut cases: Vec<Case> = Vec::new();
    let mut current: Option<Case> = None;
    let mut in_body = false;
    let mut named = String::new();
    let mut saw_root = false;
    loop {
        let ev = reader.read_event().map_err(|e| format!("not valid XML at byte {}: {e}", reader.error_position()))?;
        match ev {
            Event::Start(e) | Event::Empty(e)
                if !saw_root && matches!(e.local_name().as_ref(), b"testsuites" | b"testsuite") =>
            {
                saw_root = true;
                named = attr(&e, b"name");
                if e.local_name().as_ref() == b"testsuite" {
                    // A lone suite: its name is the class, not the runner.
                    named.clear();
                }
            }
            Event::Start(e) if e.local_name().as_ref() == b"testcase" => current = Some(case(&e)),
            Event::Empty(e) if e.local_name().as_ref() == b"testcase" => cases.push(case(&e)),
            Event::Start(e) | Event::Empty(e) if current.is_some() => {
                let c = current.as_mut().expect("checked above");
                match e.local_name().as_ref() {
                    b"failure" | b"error" => {
                        c.outcome = Outcome::Failed;
                        c.message = attr(&e, b"message");
                        in_body = true;
                    }
                    b"skipped" if c.outcome != Outcome::Failed => c.outcome = Outcome::Skipped,
                    _ => {}
                }
            }
            Event::Text(t) if in_body => {
                if let (Some(c), Ok(s)) = (current.as_mut(), t.xml_content()) {
                    c.text.push_str(&s);
                }
            }
            Event::CData(t) if in_body => {
                if let (Some(c), Ok(s)) = (current.as_mut(), t.decode()) {
                    c.text.push_str(&s);
                }
            }
            Event::GeneralRef(r) if in_body => {
                if let (Some(c), Ok(name)) = (current.as_mut(), r.decode()) {
                    match r.resolve_char_ref().ok().flatten() {
                        Some(ch) => c.text.push(ch),
                        None => c.text.push_str(quick_xml::escape::resolve_predefined_entity(&name).unwrap_or("")),
                    }
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                b"failure" | b"error" => in_body = false,
                b"testcase" => cases.extend(current.take()),
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_root {
        return Err("not a JUnit report: no <testsuites> or <testsuite> element".into());
    }
    let framework = framework
        .map(str::to_string)
        .or_else(|| named.split_whitespace().next().filter(|n| !n.is_empty()).map(str::to_string))
        .unwrap_or_else(|| "junit".into());
    let count = |o: Outcome| cases.iter().filter(|c| c.outcome == o).count() as u64;
    let (passed, failed, skipped) = (count(Outcome::Passed), count(Outcome::Failed), count(Outcome::Skipped));
    let failures: Vec<TestFailure> = cases
        .iter()
        .filter(|c| c.outcome == Outcome::Failed)
        .map(|c| {
            let file = if !c.file.is_empty() { c.file.clone() } else { c.class.clone() };
            let msg = if c.message.trim().is_empty() { c.text.as_str() } else { c.message.as_str() };
            failure(&file, c.line, &c.name, Some(msg))
        })
        .collect();
    let e2e = matches!(framework.to_ascii_lowercase().as_str(), "playwright" | "cypress");
    let mut suite = TestSuite {
        framework,
        passed,
        failed,
        skipped,
        total: passed + failed + skipped,
        failures,
        ..Default::default()
    };
    suite.settle();
    Ok(Run { e2e, suite })
}

fn case(e: &BytesStart<'_>) -> Case {
    Case {
        name: attr(e, b"name"),
        class: attr(e, b"classname"),
        file: attr(e, b"file"),
        line: attr(e, b"line").parse().ok(),
        ..Default::default()
    }
}

fn attr(e: &BytesStart<'_>, key: &[u8]) -> String {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == key)
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::testout::tests::fixture;

    #[test]
    fn real_reports_read() {
        let r = parse(&fixture("pytest-fail.junit.xml"), None).unwrap();
        let s = &r.suite;
        assert_eq!((s.framework.as_str(), s.passed, s.failed, s.skipped), ("pytest", 2, 1, 1));
        assert_eq!(s.failures[0].test_name, "test_len");
        assert_eq!(s.failures[0].message.as_deref(), Some("AssertionError: length differs"));
        let r = parse(&fixture("vitest-fail.junit.xml"), None).unwrap();
        let s = &r.suite;
        assert_eq!((s.framework.as_str(), s.passed, s.failed, s.skipped), ("vitest", 2, 1, 1));
        assert_eq!(
            (s.failures[0].file.as_str(), s.failures[0].test_name.as_str()),
            ("vt/calc.test.mjs", "calc > measures")
        );
    }

    #[test]
    fn bad_reports_give_clear_errors() {
        assert!(parse("<testsuite><testcase name='a'>", None).is_ok(), "a cut report still counts what it holds");
        assert!(parse("", None).unwrap_err().contains("not a JUnit report"));
        assert!(parse("<html><body>hi</body></html>", None).unwrap_err().contains("not a JUnit report"));
        assert!(parse("<testsuites><testsuite></x>", None).unwrap_err().contains("not valid XML"));
        let r = parse(r#"<testsuite name="S"><testcase name="t" classname="C"><error message="boom &amp; bust"/></testcase></testsuite>"#, Some("maven")).unwrap();
        assert_eq!((r.suite.failed, r.suite.framework.as_str()), (1, "maven"));
        assert_eq!(r.suite.failures[0].message.as_deref(), Some("boom & bust"));
    }
}
