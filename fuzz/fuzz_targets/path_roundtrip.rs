//! Every path (and pattern) that parses prints back to text that parses to the same path,
//! and printing is a fixed point.
#![no_main]

use hist::DocPath;
use hist::path::PathPattern;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(path) = DocPath::parse(text) {
        let printed = path.to_string();
        let again = DocPath::parse(&printed)
            .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which fails: {e}"));
        assert_eq!(again, path, "{text:?} -> {printed:?}");
        assert_eq!(again.to_string(), printed);
    }
    if let Ok(pattern) = PathPattern::parse(text) {
        let printed = pattern.to_string();
        let again = PathPattern::parse(&printed)
            .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which fails: {e}"));
        assert_eq!(again, pattern, "{text:?} -> {printed:?}");
        assert_eq!(again.to_string(), printed);
    }
});
