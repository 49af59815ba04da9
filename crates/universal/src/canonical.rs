//! JSON in a canonical key order, for what is compared or digested as text (the generated
//! specs, schema fingerprints): serde_json keeps objects' keys in the order written
//! (`preserve_order`), and these must not depend on it.

use serde_json::Value;

/// Sorts the keys of every object in `value`, at every depth.
pub fn sort_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.sort_keys();
            map.values_mut().for_each(sort_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let mut value = serde_json::json!({"b": [{"z": 1, "a": 2}], "a": {"y": 1, "x": 2}});
        sort_keys(&mut value);
        assert_eq!(
            value.to_string(),
            r#"{"a":{"x":2,"y":1},"b":[{"a":2,"z":1}]}"#
        );
    }
}
