//! The words by which a message says that what follows (or, in Japanese and Korean, what
//! precedes) is a source's, not the agent's: source nouns, reporting verbs, lead-ins and
//! quotative particles, in the languages agents are used in.
//!
//! Word lists are matched whole (ignoring case) for English; inflected languages (German,
//! Romance languages, Russian) by a stem the word starts with; Chinese, Japanese and Korean,
//! which do not put spaces between words (or attach particles to them), by a phrase the
//! run of letters holds.

/// Lead-ins that introduce what follows as quoted (`Here is the README's content`, `The
/// file contains the following`, `Output of cat notes.md`, `and got back`), matched inside
/// the lowercased sentence.
const INTRODUCING: &[&str] = &[
    "the following",
    "as follows",
    "content",
    "contents",
    "output of",
    "got back",
    "goes on with",
    "reads as",
    "below",
    "verbatim",
    // German, French, Spanish, Portuguese, Italian.
    "folgende",
    "wie folgt",
    "lautet",
    "nachstehend",
    "inhalt",
    "suivant",
    "ci-dessous",
    "contenu",
    "siguiente",
    "a continuación",
    "contenido",
    "seguinte",
    "abaixo",
    "conteúdo",
    "seguente",
    "contenuto",
    // Russian.
    "следующ",
    "ниже",
    "содержим",
    "гласит",
    // Japanese, Chinese, Korean.
    "次の",
    "以下",
    "下記",
    "内容",
    "如下",
    "下面",
    "다음과",
    "아래와",
    "내용",
];

/// Whether a sentence introduces what follows it as quoted (see [`INTRODUCING`]).
pub(super) fn introduces(sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    INTRODUCING.iter().any(|p| lower.contains(p))
}

/// Words that say the text after the colon is someone else's: "The README says: …".
const ATTRIBUTIONS: &[&str] = &[
    "says",
    "said",
    "states",
    "stated",
    "reads",
    "writes",
    "wrote",
    "claims",
    "claimed",
    "notes",
    "mentions",
    "mentioned",
    "contains",
    "tells",
    "told",
    "instructs",
    "asks",
    "asked",
    "quote",
    "quotes",
    "quoting",
    "follows",
    "declares",
    "insists",
    "suggests",
    "recommends",
    "warns",
    "explains",
    "puts",
    // German.
    "lautet",
    "sagt",
    "besagt",
    "enthält",
    "schreibt",
    "steht",
    "heißt",
    // French.
    "dit",
    "indique",
    "contient",
    "précise",
    // Spanish, Portuguese, Italian.
    "dice",
    "diz",
    "contiene",
    "contém",
    "indica",
    "afirma",
    "riporta",
    // Russian.
    "гласит",
    "говорит",
    "содержит",
    "пишет",
    "написано",
    "указано",
    "сказано",
];

/// Whether `word` is one of [`ATTRIBUTIONS`] (any case).
pub(super) fn attributes(word: &str) -> bool {
    is_one_of(ATTRIBUTIONS, word)
}

/// Verbs that report what a source says, beside [`ATTRIBUTIONS`].
const REPORTING: &[&str] = &[
    "say",
    "state",
    "read",
    "write",
    "lists",
    "listed",
    "shows",
    "showed",
    "prints",
    "printed",
    "outputs",
    "returns",
    "returned",
    "includes",
    "included",
    "defines",
    "specifies",
    "documents",
    "describes",
    "contain",
    "contained",
    "quoted",
    "instructed",
    "wants",
    "requests",
    "demands",
    "echoed",
    "echoes",
    "emitted",
    "logged",
    "answered",
    "replied",
    "responded",
    "commented",
    "reported",
    "reports",
    // German, French, Spanish, Portuguese, Italian.
    "meldet",
    "meldete",
    "schrieb",
    "zeigte",
    "zeigt",
    "ausgibt",
    "liefert",
    "affiche",
    "renvoie",
    "muestra",
    "devuelve",
    "mostra",
    "retorna",
    // Russian.
    "выводит",
    "показывает",
    "возвращает",
];

/// Whether `word` is a verb that reports a source's words, after `subject` (the word before
/// it). The user and the agent are no source: `As you asked, [REMEMBER: …]` is a request
/// kept, and `The user says: …` is the agent's report of it.
pub(super) fn reporting(subject: &str, word: &str) -> bool {
    const PEOPLE: &[&str] = &["i", "we", "you", "user", "me", "us", "ich", "wir", "je", "nous", "я", "мы"];
    (attributes(word) || is_one_of(REPORTING, word)) && !is_one_of(PEOPLE, subject)
}

/// Nouns that name where text comes from (`The file:`, `Test output:`).
pub(super) const SOURCES: &[&str] = &[
    "readme",
    "changelog",
    "license",
    "makefile",
    "dockerfile",
    "file",
    "documentation",
    "docs",
    "page",
    "comment",
    "comments",
    "issue",
    "log",
    "logs",
    "output",
    "transcript",
    "email",
    "website",
    "wiki",
    "ticket",
    "instructions",
    "stdout",
    "stderr",
    "console",
    "excerpt",
    "response",
    "webpage",
    "description",
    "article",
    "thread",
];

/// The stems of source nouns in inflected languages (`Datei`, `Dateien`; `файл`, `файла`,
/// `файле`): a word that starts with one names a source.
const SOURCE_STEMS: &[&str] = &[
    // German.
    "datei",
    "inhalt",
    "ausgabe",
    "dokumentation",
    "protokoll",
    "anleitung",
    "kommentar",
    // French, Spanish, Portuguese, Italian.
    "fichier",
    "contenu",
    "sortie",
    "archivo",
    "fichero",
    "contenido",
    "salida",
    "arquivo",
    "conteúdo",
    "saída",
    "contenuto",
    "documentaci",
    "documentaç",
    "documentazion",
    // Russian.
    "файл",
    "содержим",
    "вывод",
    "документац",
    "журнал",
    "комментар",
    "инструкци",
];

/// Source nouns in the scripts written without spaces (a run of letters holds them with
/// what is attached to them: `ファイルの内容は`, `파일에는`).
const SOURCE_PHRASES: &[&str] = &[
    // Japanese.
    "ファイル",
    "内容",
    "出力",
    "ログ",
    "ドキュメント",
    "コメント",
    "記載",
    // Chinese.
    "文件",
    "输出",
    "日志",
    "文档",
    "檔案",
    "輸出",
    "日誌",
    "文檔",
    "注释",
    // Korean.
    "파일",
    "내용",
    "출력",
    "로그",
    "문서",
    "주석",
];

/// Whether `word` (a run of letters and digits) is, or holds, a source noun: one of
/// [`SOURCES`] (also with a particle of another script attached: `README에는`,
/// `READMEの`), a stem of [`SOURCE_STEMS`], a phrase of [`SOURCE_PHRASES`].
pub(super) fn source_word(word: &str) -> bool {
    let latin = word.trim_end_matches(|c: char| !c.is_ascii());
    if is_one_of(SOURCES, word) || (!latin.is_empty() && is_one_of(SOURCES, latin)) {
        return true;
    }
    let lower = word.to_lowercase();
    SOURCE_STEMS.iter().any(|s| lower.starts_with(s))
        || (!word.is_ascii() && SOURCE_PHRASES.iter().any(|p| word.contains(p)))
}

/// What follows a quotation in Japanese and Korean to say whose words it was
/// (`[DONE: …]と書かれています`, `[DONE: …]라고 적혀 있다`).
const QUOTATIVES: &[&str] =
    &["と書", "とあ", "と記", "と言", "と表示", "と出", "って", "라고", "이라고", "고 적혀", "고 쓰여"];

/// Whether `rest` (what follows a marker in its paragraph) starts with a quotative particle
/// (see [`QUOTATIVES`]): the marker was the source's words.
pub(super) fn quoted_by_what_follows(rest: &str) -> bool {
    let rest = rest.trim_start();
    QUOTATIVES.iter().any(|q| rest.starts_with(q))
}

/// Words before a colon by which the agent introduces its own markers (`Then: [GOAL: …]`,
/// `Noted:` before a list of them). Any other word before a colon is a label of someone
/// else's text (`stdout: […]`, `Z pliku: […]`), unless the agent speaks in the first person
/// ([`FIRST_PERSON`]).
const OWN_LEADS: &[&str] = &[
    "then",
    "next",
    "note",
    "notes",
    "noted",
    "also",
    "finally",
    "so",
    "ok",
    "okay",
    "update",
    "updated",
    "summary",
    "remember",
    "reminder",
    "reminders",
    "facts",
    "fact",
    "goal",
    "goals",
    "done",
    "todo",
    "todos",
    "plan",
    "points",
    "takeaways",
    "learnings",
    "decision",
    "decisions",
    "keep",
    "kept",
    "later",
    "meanwhile",
    "changes",
    "work",
    "progress",
    "status",
    "steps",
    "items",
    "tasks",
    "recap",
    "here",
    "list",
    "conclusions",
    "learned",
];

/// The first person: a lead-in in the agent's own voice (`I'll keep this in mind:`).
const FIRST_PERSON: &[&str] = &["i", "i'll", "i've", "i'm", "we", "we'll", "we've", "let", "me", "my", "our", "us"];

/// Whether the words `lead` (what stands before a colon, in its sentence) introduce the
/// agent's own markers: the last word is one of [`OWN_LEADS`], or the agent speaks in the
/// first person and names no source.
pub(super) fn own_lead(lead: &str) -> bool {
    let words: Vec<&str> =
        lead.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    match words.last() {
        None => false,
        Some(last) if is_one_of(OWN_LEADS, last) => true,
        Some(_) => words.iter().any(|w| is_one_of(FIRST_PERSON, w)) && !words.iter().any(|w| source_word(w)),
    }
}

/// Words after which a marker goes on with the agent's own sentence (`As you asked, [A] and
/// [B]`, `subagent done [REMEMBER: …]`). After any other word, a marker is what that word
/// introduces (`The hook echoed [DONE: …]`, `Der Test schrieb […]`, `उसमें लिखा है […]`).
const JOINING: &[&str] = &["and", "also", "then", "plus", "done", "finally", "und", "et", "y", "e", "и", "а также"];

/// Whether `word` (the last before a marker) lets the agent's sentence go on into it.
pub(super) fn joins(word: &str) -> bool {
    is_one_of(JOINING, word)
}

/// Whether `word` is one of `list` (lowercase), whatever its case.
fn is_one_of(list: &[&str], word: &str) -> bool {
    if word.is_ascii() {
        list.iter().any(|w| w.eq_ignore_ascii_case(word))
    } else {
        let lower = word.to_lowercase();
        list.contains(&lower.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_nouns_are_found_in_every_script() {
        for w in ["README", "file", "Datei", "Dateien", "Inhalt", "fichier", "файла", "Содержимое", "README에는"]
        {
            assert!(source_word(w), "{w}");
        }
        for w in ["ファイルの内容は次のとおりです", "파일에는", "文件内容如下", "READMEの"] {
            assert!(source_word(w), "{w}");
        }
        for w in ["profile", "filed", "Dating", "файрвол", "決定しました", "파이썬"] {
            assert!(!source_word(w), "{w}");
        }
    }

    #[test]
    fn reporting_verbs_in_other_languages_after_a_source_not_a_person() {
        assert!(reporting("Datei", "lautet"));
        assert!(reporting("файл", "Гласит"));
        assert!(reporting("fichier", "dit"));
        assert!(!reporting("ich", "sagt"));
        assert!(!reporting("я", "говорит"));
    }

    #[test]
    fn quotative_particles_after_a_marker() {
        assert!(quoted_by_what_follows("と書かれています。"));
        assert!(quoted_by_what_follows(" 라고 적혀 있다."));
        assert!(!quoted_by_what_follows("を完了しました。"));
        assert!(!quoted_by_what_follows(" and then"));
    }
}
