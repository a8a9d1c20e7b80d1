//! The allow-listed pickle reader of `ferrotorch::io::pickle` on hand-written
//! pickles: plain values and the memo load; code, unknown names and garbage
//! are refused with an error; deep nesting is freed without recursion.

use ferrotorch::io::pickle::{load, Value};
use ferrotorch::{Error, Result};

fn no_storage(_: &[Value]) -> Result<Value> {
    Err(Error::runtime("no storages here"))
}

#[test]
fn plain_values_and_memo() {
    // pickle.dumps(OrderedDict(a=1), protocol=2) shape, written by hand.
    let data = b"\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01X\x01\x00\x00\x00aK\x01s.";
    let v = load(data, &mut no_storage).unwrap();
    let Value::Dict(d) = &v else { panic!("not a dict: {}", v.type_name()) };
    assert_eq!(d.borrow().items.len(), 1);
}

#[test]
fn refuses_code_and_garbage() {
    for (data, needle) in [
        (&b"cos\nsystem\nX\x02\x00\x00\x00lsR."[..], "blocked"),
        (b"cbuiltins\neval\n.", "Unsupported global: GLOBAL eval was not"),
        (b"c__builtin__\neval\n.", "Unsupported global: GLOBAL eval was not"),
        (b"ctorch._utils\n_rebuild_qtensor\n.", "Unsupported global: GLOBAL torch._utils._rebuild_qtensor"),
        (b"\x8c\x02os\x8c\x06system\x93.", "blocked"),
        (b"K\x01)R.", "unrecognized function"),
        (b"K\x01\x8c", "truncated"),
        (b"h\x05.", "Memo value not found"),
        (b"t.", "no MARK"),
        (b".", "empty stack"),
        (b"\xff", "Unsupported operand"),
    ] {
        let e = load(data, &mut no_storage).err().unwrap_or_else(|| panic!("{data:?} loaded"));
        assert!(e.to_string().contains(needle), "{data:?}: {e}");
    }
}

#[test]
fn deep_nesting_drops_without_recursion() {
    let mut data = vec![b')'];
    data.extend(std::iter::repeat(0x85u8).take(1_000_000));
    data.push(b'.');
    assert!(load(&data, &mut no_storage).is_ok());
}
