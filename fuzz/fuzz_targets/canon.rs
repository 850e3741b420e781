//! The canonical form: whatever parses prints canonically, the canonical text parses back to
//! the same value, printing it again gives the same bytes, the hash is the hash of those
//! bytes, and the pretty form parses back to the same value.
#![no_main]

use hist::canon;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = canon::parse(data) else {
        return;
    };
    let text = canon::to_canonical_string(&value);
    let back = canon::parse_str(&text)
        .unwrap_or_else(|e| panic!("canonical text {text:?} does not parse: {e}"));
    assert_eq!(canon::to_canonical_string(&back), text, "not a fixed point");
    let mut bytes = Vec::new();
    canon::write_canonical(&value, &mut bytes);
    assert_eq!(bytes, text.as_bytes());
    assert_eq!(canon::hash(&value), canon::ObjectId::of(text.as_bytes()));
    let pretty = canon::to_pretty_string(&value);
    let from_pretty = canon::parse_str(&pretty)
        .unwrap_or_else(|e| panic!("pretty text {pretty:?} does not parse: {e}"));
    assert_eq!(canon::to_canonical_string(&from_pretty), text);
});
