//! The directory of a zip archive whose entries are stored uncompressed, as
//! `torch.save` writes them: each entry's name and the byte range of its data
//! in the archive, so that tensor data can be used where it lies.
//!
//! Only what PyTorch writes is read: stored (method 0), unencrypted entries,
//! with or without the zip64 records. Every offset and length is checked
//! against the archive's size, so a truncated or garbled file is an error.
//! CRCs are not checked: that would read every byte of a checkpoint that is
//! otherwise only mapped.

use std::ops::Range;

use ferrotorch_core::{Error, Result};

/// One entry of the archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZipEntry {
    /// The entry's path inside the archive.
    pub name: String,
    /// Where its (uncompressed) data lies in the archive.
    pub data: Range<usize>,
}

const EOCD: u32 = 0x0605_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const ZIP64_EOCD: u32 = 0x0606_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;

fn bad(msg: impl std::fmt::Display) -> Error {
    Error::runtime(format!("not a valid zip archive: {msg}"))
}

/// Little-endian reads at checked positions.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn slice(&self, at: usize, n: usize) -> Result<&[u8]> {
        at.checked_add(n).and_then(|end| self.0.get(at..end)).ok_or_else(|| bad(format!("record at byte {at} runs past the end")))
    }
    fn u16(&self, at: usize) -> Result<u16> {
        Ok(u16::from_le_bytes(self.slice(at, 2)?.try_into().unwrap_or_default()))
    }
    fn u32(&self, at: usize) -> Result<u32> {
        Ok(u32::from_le_bytes(self.slice(at, 4)?.try_into().unwrap_or_default()))
    }
    fn u64(&self, at: usize) -> Result<u64> {
        Ok(u64::from_le_bytes(self.slice(at, 8)?.try_into().unwrap_or_default()))
    }
}

fn to_usize(v: u64, what: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| bad(format!("{what} {v} is too large")))
}

/// Where the central directory lies and how many entries it holds.
fn central_directory(r: &Reader) -> Result<(usize, usize, usize)> {
    let n = r.0.len();
    if n < 22 {
        return Err(bad("the file is too short"));
    }
    // The end record is the last 22 bytes plus a comment of at most 64 KiB.
    let lowest = n.saturating_sub(22 + 0xffff);
    let eocd = (lowest..=n - 22).rev().find(|&i| r.u32(i).ok() == Some(EOCD)).ok_or_else(|| bad("no end-of-central-directory record"))?;
    let mut entries = r.u16(eocd + 10)? as u64;
    let mut size = r.u32(eocd + 12)? as u64;
    let mut offset = r.u32(eocd + 16)? as u64;
    if entries == 0xffff || size == 0xffff_ffff || offset == 0xffff_ffff {
        let loc = eocd.checked_sub(20).ok_or_else(|| bad("no zip64 locator"))?;
        if r.u32(loc)? != ZIP64_LOCATOR {
            return Err(bad("no zip64 locator"));
        }
        let rec = to_usize(r.u64(loc + 8)?, "zip64 record offset")?;
        if r.u32(rec)? != ZIP64_EOCD {
            return Err(bad("no zip64 end-of-central-directory record"));
        }
        entries = r.u64(rec + 32)?;
        size = r.u64(rec + 40)?;
        offset = r.u64(rec + 48)?;
    }
    Ok((to_usize(offset, "directory offset")?, to_usize(size, "directory size")?, to_usize(entries, "entry count")?))
}

/// The zip64 values that replace the 0xffffffff fields of a directory entry,
/// in the order the format lists them.
fn zip64_fields(r: &Reader, extra: Range<usize>, wanted: usize) -> Result<Vec<u64>> {
    let mut at = extra.start;
    while at + 4 <= extra.end {
        let (id, len) = (r.u16(at)?, r.u16(at + 2)? as usize);
        if id == 0x0001 {
            if len < 8 * wanted {
                return Err(bad("zip64 extra field too short"));
            }
            return (0..wanted).map(|k| r.u64(at + 4 + 8 * k)).collect();
        }
        at += 4 + len;
    }
    Err(bad("missing zip64 extra field"))
}

/// The entries of the archive `bytes`, in directory order.
///
/// ```
/// use ferrotorch::io::zip::entries;
/// // An archive with no entries: only the 22-byte end record.
/// let mut empty = vec![0x50, 0x4b, 0x05, 0x06];
/// empty.resize(22, 0);
/// assert!(entries(&empty).unwrap().is_empty());
/// assert!(entries(b"not a zip").is_err());
/// ```
pub fn entries(bytes: &[u8]) -> Result<Vec<ZipEntry>> {
    let r = Reader(bytes);
    let (mut at, size, count) = central_directory(&r)?;
    let end = at.checked_add(size).filter(|&e| e <= bytes.len()).ok_or_else(|| bad("the central directory runs past the end"))?;
    // Each directory record takes at least 46 bytes: a count beyond that is garbage.
    if count > size / 46 {
        return Err(bad(format!("{count} entries cannot fit in a {size}-byte directory")));
    }
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        if at + 46 > end || r.u32(at)? != CENTRAL {
            return Err(bad(format!("bad central directory record at byte {at}")));
        }
        let flags = r.u16(at + 8)?;
        let method = r.u16(at + 10)?;
        let mut csize = r.u32(at + 20)? as u64;
        let mut usize_ = r.u32(at + 24)? as u64;
        let (name_len, extra_len, comment_len) = (r.u16(at + 28)? as usize, r.u16(at + 30)? as usize, r.u16(at + 32)? as usize);
        let mut local = r.u32(at + 42)? as u64;
        let name = String::from_utf8(r.slice(at + 46, name_len)?.to_vec()).map_err(|_| bad("an entry name is not UTF-8"))?;
        let extra = at + 46 + name_len..at + 46 + name_len + extra_len;
        r.slice(extra.start, extra_len)?;
        let wide = [usize_, csize, local].iter().filter(|&&v| v == 0xffff_ffff).count();
        if wide > 0 {
            let mut vals = zip64_fields(&r, extra, wide)?.into_iter();
            for field in [&mut usize_, &mut csize, &mut local] {
                if *field == 0xffff_ffff {
                    *field = vals.next().unwrap_or_default();
                }
            }
        }
        if flags & 1 != 0 {
            return Err(bad(format!("entry {name:?} is encrypted")));
        }
        if method != 0 || csize != usize_ {
            return Err(bad(format!("entry {name:?} is compressed (method {method}); only stored entries, as torch.save writes them, are read")));
        }
        let local = to_usize(local, "entry offset")?;
        if r.u32(local)? != LOCAL {
            return Err(bad(format!("bad local header of entry {name:?}")));
        }
        let data_start = local + 30 + r.u16(local + 26)? as usize + r.u16(local + 28)? as usize;
        let len = to_usize(usize_, "entry size")?;
        r.slice(data_start, len).map_err(|_| bad(format!("the data of entry {name:?} runs past the end")))?;
        out.push(ZipEntry { name, data: data_start..data_start + len });
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}
