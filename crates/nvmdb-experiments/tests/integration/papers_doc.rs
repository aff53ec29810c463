//! docs/papers.md lists every paper's claims and its statements not measured here,
//! generated from the tables in `papers/` between `<!-- claims:SEED -->` and
//! `<!-- end claims -->` markers. `NVMDB_BLESS=1` rewrites the
//! file instead of comparing.

use nvmdb_experiments::papers;

const END: &str = "<!-- end claims -->";

/// `doc` with each paper's marked section replaced by its generated table.
fn regenerate(doc: &str) -> String {
    let mut out = doc.to_string();
    for (seed, _) in papers::PAPERS {
        let start = format!("<!-- claims:{seed} -->");
        let begin = out.find(&start).unwrap_or_else(|| panic!("docs/papers.md lacks the marker {start}"));
        let body = begin + start.len();
        let end = body + out[body..].find(END).unwrap_or_else(|| panic!("{start} has no {END} after it"));
        out.replace_range(
            body..end,
            &format!(
                "\n{}\nNot measured here, and why:\n\n{}",
                papers::markdown(seed),
                papers::unmeasured_markdown(seed)
            ),
        );
    }
    out
}

#[test]
fn papers_doc_lists_the_claims() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/papers.md");
    let doc = std::fs::read_to_string(&path).expect("docs/papers.md");
    let expected = regenerate(&doc);
    if std::env::var_os("NVMDB_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &expected).expect("write docs/papers.md");
    } else {
        assert!(doc == expected, "docs/papers.md is out of date with the claim tables; rerun with NVMDB_BLESS=1");
    }
}
