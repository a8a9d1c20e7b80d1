//! A prediction service for the CNN of `examples/train_cnn_export.py`: it
//! loads the state dict that script saved (`cnn.pt` or `cnn.safetensors`)
//! and answers JSON lines on stdin, one per request, from a pool of worker
//! threads sharing the one model (no lock around it):
//!
//! ```text
//! request:  {"id": 1, "pixels": [256 numbers, a 16x16 image]}
//! response: {"id": 1, "class": 2, "logits": [..4 numbers..]}
//! ```
//!
//! Responses are written as they finish, so their order can differ from the
//! requests'; the `id` pairs them.
//!
//! ```text
//! python examples/train_cnn_export.py --out-dir /tmp/cnn
//! cargo run -p ferrotorch --example serve_cnn -- /tmp/cnn/cnn.pt [--workers 4] < /tmp/cnn/request.jsonl
//! ```

use std::io::{BufRead, Write};
use std::sync::{mpsc, Arc, Mutex};

use ferrotorch::nn::{self, Conv2d, ConvOptions, Flatten, Linear, MaxPool2d, Module, ReLU, Sequential};
use ferrotorch::{Error, Result, Tensor};

/// The architecture of `make_model()` in train_cnn_export.py, layer for layer.
fn make_model() -> Result<Sequential> {
    let conv = |i, o| Conv2d::conv2d(i, o, [3, 3], ConvOptions::new(2).padding(&[1, 1]));
    Ok(Sequential::new()
        .push(conv(1, 8)?)
        .push(ReLU)
        .push(MaxPool2d::new([2, 2]))
        .push(conv(8, 16)?)
        .push(ReLU)
        .push(MaxPool2d::new([2, 2]))
        .push(Flatten::default())
        .push(Linear::new(16 * 4 * 4, 4, true)?))
}

/// The number after `"key":` in a flat JSON object.
fn number_after(line: &str, key: &str) -> Option<(f64, usize)> {
    let at = line.find(&format!("\"{key}\""))? + key.len() + 2;
    let rest = line[at..].trim_start().strip_prefix(':')?.trim_start();
    let len = rest.find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c))).unwrap_or(rest.len());
    Some((rest[..len].parse().ok()?, at))
}

/// `(id, pixels)` of a request line.
fn parse_request(line: &str) -> std::result::Result<(i64, Vec<f32>), String> {
    let id = number_after(line, "id").map(|(v, _)| v as i64).ok_or("missing \"id\"")?;
    let at = line.find("\"pixels\"").ok_or("missing \"pixels\"")?;
    let open = at + line[at..].find('[').ok_or("\"pixels\" is not an array")?;
    let close = open + line[open..].find(']').ok_or("unterminated \"pixels\" array")?;
    let pixels: std::result::Result<Vec<f32>, _> = line[open + 1..close].split(',').map(|s| s.trim().parse::<f32>()).collect();
    let pixels = pixels.map_err(|e| format!("bad pixel value: {e}"))?;
    if pixels.len() != 256 {
        return Err(format!("expected 256 pixels, got {}", pixels.len()));
    }
    Ok((id, pixels))
}

fn predict(model: &Sequential, pixels: Vec<f32>) -> Result<(usize, Vec<f32>)> {
    let x = Tensor::from_vec(pixels, &[1, 1, 16, 16])?;
    let logits: Vec<f32> = model.forward(&x)?.to_vec()?;
    let class = (0..logits.len()).max_by(|&a, &b| logits[a].total_cmp(&logits[b])).ok_or_else(|| Error::runtime("no logits"))?;
    Ok((class, logits))
}

fn answer(model: &Sequential, line: &str) -> String {
    match parse_request(line) {
        // A request whose id could be read gets its error under that id.
        Err(e) => match number_after(line, "id") {
            Some((id, _)) => format!("{{\"id\": {}, \"error\": {:?}}}", id as i64, e),
            None => format!("{{\"error\": {:?}}}", e),
        },
        Ok((id, pixels)) => match predict(model, pixels) {
            Ok((class, logits)) => {
                let logits: Vec<String> = logits.iter().map(|v| format!("{v}")).collect();
                format!("{{\"id\": {id}, \"class\": {class}, \"logits\": [{}]}}", logits.join(", "))
            }
            Err(e) => format!("{{\"id\": {id}, \"error\": {:?}}}", e.to_string()),
        },
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().ok_or_else(|| Error::value("usage: serve_cnn <cnn.pt|cnn.safetensors> [--workers N]"))?;
    let workers = args.iter().position(|a| a == "--workers").and_then(|i| args.get(i + 1)).and_then(|n| n.parse().ok()).unwrap_or(4usize);

    let model = make_model()?;
    model.load_state_dict(&ferrotorch::io::load(path)?, true)?;
    model.eval();
    model.requires_grad_(false)?;
    // Each request is small: one intra-op thread per request thread keeps
    // the workers from fighting over the cores.
    ferrotorch::set_num_threads(1)?;
    let model = Arc::new(model);

    let (tx, rx) = mpsc::channel::<String>();
    let rx = Arc::new(Mutex::new(rx));
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let pool: Vec<_> = (0..workers.max(1))
        .map(|_| {
            let (model, rx, out) = (model.clone(), rx.clone(), out.clone());
            std::thread::spawn(move || {
                let _no_grad = nn::no_grad();
                loop {
                    // The queue's lock is held only to take a line, never while predicting.
                    let line = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(line) = line else { return };
                    let reply = answer(&model, &line);
                    if let Ok(mut out) = out.lock() {
                        let _ = writeln!(out, "{reply}");
                        let _ = out.flush();
                    }
                }
            })
        })
        .collect();
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| Error::runtime(format!("reading stdin: {e}")))?;
        if !line.trim().is_empty() && tx.send(line).is_err() {
            break;
        }
    }
    drop(tx);
    for t in pool {
        let _ = t.join();
    }
    Ok(())
}
