//! The standard library written in AEL (`stdlib/ael/std/*.ael`), embedded in the binary so a
//! project needs nothing on disk to `use std::…` (spec §1).

/// Every std module: its path (`std::text`) and its source.
static MODULES: &[(&str, &str)] = &[
    ("std::media", include_str!("../stdlib/ael/std/media.ael")),
    ("std::text", include_str!("../stdlib/ael/std/text.ael")),
];

/// Every std module as `(path, source)`, in path order.
pub fn modules() -> &'static [(&'static str, &'static str)] {
    MODULES
}

/// The source of the std module at `path` (`"std::text"`), if there is one.
pub fn source(path: &str) -> Option<&'static str> {
    MODULES.iter().find(|(p, _)| *p == path).map(|(_, s)| *s)
}

/// The file name a std module is shown under in diagnostics (`std/text.ael`).
pub fn file_name(path: &str) -> String {
    format!("{}.ael", path.replace("::", "/"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn modules_are_sorted_and_found() {
        let paths: Vec<&str> = super::modules().iter().map(|(p, _)| *p).collect();
        let mut sorted = paths.clone();
        sorted.sort_unstable();
        assert_eq!(paths, sorted);
        assert!(super::source("std::text").is_some());
        assert!(super::source("std::nope").is_none());
        assert_eq!(super::file_name("std::text"), "std/text.ael");
    }
}
