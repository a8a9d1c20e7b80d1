//! The `nn` layers, `io` readers and optimizers against values recorded from
//! PyTorch 2.13 by `scripts/record_nn_reference.py` (the layer
//! configurations here repeat the script's). No Python runs here.

use std::collections::HashMap;
use std::path::PathBuf;

use ferrotorch::autograd;
use ferrotorch::io::{self, pt, safetensors};
use ferrotorch::nn::functional::scaled_dot_product_attention;
use ferrotorch::nn::optim::{Adam, Sgd};
use ferrotorch::nn::*;
use ferrotorch::{DType, Result, Tensor};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

struct Reference(HashMap<String, Tensor>);

impl Reference {
    fn load() -> Reference {
        Reference(safetensors::mmap_file(fixture("nn_reference.safetensors")).unwrap().into_iter().collect())
    }
    fn get(&self, key: &str) -> Tensor {
        self.0.get(key).unwrap_or_else(|| panic!("no fixture tensor {key}")).clone()
    }
    fn input(&self, case: &str, name: &str) -> Tensor {
        self.get(&format!("{case}.in.{name}"))
    }
    fn output(&self, case: &str, name: &str) -> Tensor {
        self.get(&format!("{case}.out.{name}"))
    }
    fn state(&self, case: &str) -> Vec<(String, Tensor)> {
        let prefix = format!("{case}.state.");
        self.0.iter().filter_map(|(k, t)| k.strip_prefix(&prefix).map(|n| (n.to_string(), t.clone()))).collect()
    }
    /// Loads the case's state dict into `m` (strictly: every name must match).
    fn loaded<M: Module>(&self, case: &str, m: M) -> M {
        m.load_state_dict(&self.state(case), true).unwrap_or_else(|e| panic!("{case}: {e}"));
        m.eval();
        m
    }
    /// `m(x)` equals PyTorch's `y`.
    fn check_layer<M: Module>(&self, case: &str, m: M) {
        let m = self.loaded(case, m);
        let _g = no_grad();
        let y = m.forward(&self.input(case, "x")).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_close(case, &y, &self.output(case, "y"), 1e-5);
    }
}

fn assert_close(what: &str, got: &Tensor, want: &Tensor, tol: f64) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let (g, w) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let ok = (a - b).abs() <= tol * (1.0 + b.abs()) || (a.is_nan() && b.is_nan());
        assert!(ok, "{what}: element {i}: got {a}, PyTorch {b}");
    }
}

#[test]
fn layers_match_pytorch() {
    let r = Reference::load();
    let conv = |o: ConvOptions| o;
    r.check_layer("linear", Linear::new(5, 3, true).unwrap());
    r.check_layer("linear_nobias", Linear::new(5, 3, false).unwrap());
    r.check_layer("conv1d", Conv1d::conv1d(4, 6, 3, conv(ConvOptions::new(1).stride(&[2]).padding(&[1]).groups(2))).unwrap());
    r.check_layer(
        "conv2d",
        Conv2d::conv2d(4, 6, [3, 2], ConvOptions::new(2).stride(&[2, 1]).padding(&[1, 0]).dilation(&[1, 2]).groups(2)).unwrap(),
    );
    r.check_layer("conv2d_unbatched", Conv2d::conv2d(3, 2, [3, 3], ConvOptions::new(2).padding(&[1, 1]).bias(false)).unwrap());
    r.check_layer(
        "conv_transpose2d",
        ConvTranspose2d::conv_transpose2d(4, 6, [3, 3], ConvOptions::new(2).stride(&[2, 2]).padding(&[1, 1]).output_padding(&[1, 1]).groups(2))
            .unwrap(),
    );
    r.check_layer("embedding", Embedding::new(10, 4).unwrap());
    r.check_layer("layer_norm", LayerNorm::new(&[4, 5], 1e-5, true, true).unwrap());
    r.check_layer("rms_norm", RMSNorm::new(&[6], None, true).unwrap());
    r.check_layer("rms_norm_eps", RMSNorm::new(&[2, 3], Some(1e-3), false).unwrap());
    r.check_layer("batch_norm1d", BatchNorm1d::batch_norm1d(4, 1e-5, 0.1, true).unwrap());
    r.check_layer("batch_norm2d", BatchNorm2d::batch_norm2d(3, 1e-5, 0.1, true).unwrap());
    r.check_layer("group_norm", GroupNorm::new(2, 6, 1e-5, true).unwrap());
    r.check_layer("relu", ReLU);
    r.check_layer("gelu", GELU::default());
    r.check_layer("gelu_tanh", GELU::new("tanh").unwrap());
    r.check_layer("silu", SiLU);
    r.check_layer("tanh", Tanh);
    r.check_layer("sigmoid", Sigmoid);
    r.check_layer("softmax", Softmax { dim: 1 });
    r.check_layer("dropout", Dropout::new(0.5).unwrap());
    r.check_layer("max_pool2d", MaxPool2d { stride: [2, 2], padding: [1, 1], ..MaxPool2d::new([3, 3]) });
    r.check_layer("avg_pool2d", AvgPool2d { stride: [2, 2], padding: [1, 1], ..AvgPool2d::new([3, 3]) });
    r.check_layer("adaptive_avg_pool2d", AdaptiveAvgPool2d { output_size: [3, 2] });
    r.check_layer("flatten", Flatten::default());
}

#[test]
fn attention_matches_pytorch() {
    let r = Reference::load();
    let _g = no_grad();
    let mha = r.loaded("mha", MultiheadAttention::new(8, 2, true, true).unwrap());
    let (q, k, v) = (r.input("mha", "q"), r.input("mha", "k"), r.input("mha", "v"));
    let (kpm, am) = (r.input("mha", "key_padding_mask"), r.input("mha", "attn_mask"));
    let (y, w) = mha.attend(&q, &k, &v, Some(&kpm), true, Some(&am), true).unwrap();
    assert_close("mha.y", &y, &r.output("mha", "y"), 1e-5);
    assert_close("mha.w", &w.unwrap(), &r.output("mha", "w"), 1e-5);

    let mha2 = r.loaded("mha_seq_first", MultiheadAttention::new(6, 3, true, false).unwrap());
    let (x, causal) = (r.input("mha_seq_first", "x"), r.input("mha_seq_first", "attn_mask"));
    let (y, w) = mha2.attend(&x, &x, &x, None, true, Some(&causal), false).unwrap();
    assert_close("mha_seq_first.y", &y, &r.output("mha_seq_first", "y"), 1e-5);
    assert_close("mha_seq_first.w", &w.unwrap(), &r.output("mha_seq_first", "w"), 1e-5);

    let (q, k, v, mask) = (r.input("sdpa", "q"), r.input("sdpa", "k"), r.input("sdpa", "v"), r.input("sdpa", "mask"));
    let y = scaled_dot_product_attention(&q, &k, &v, Some(&mask), 0.0, false, None).unwrap();
    assert_close("sdpa.y", &y, &r.output("sdpa", "y"), 1e-5);
    let y = scaled_dot_product_attention(&q, &k, &v, None, 0.0, false, Some(0.3)).unwrap();
    assert_close("sdpa.y_scaled", &y, &r.output("sdpa", "y_scaled"), 1e-5);
    let q = r.input("sdpa_causal", "q");
    let y = scaled_dot_product_attention(&q, &q, &q, None, 0.0, true, None).unwrap();
    assert_close("sdpa_causal.y", &y, &r.output("sdpa_causal", "y"), 1e-5);
}

#[test]
fn recurrent_layers_match_pytorch() {
    let r = Reference::load();
    let _g = no_grad();
    let lstm = r.loaded("lstm", LSTM::lstm(5, 6, 2, true, true, false).unwrap());
    let (y, h, c) = lstm.forward_with(&r.input("lstm", "x"), None).unwrap();
    assert_close("lstm.y", &y, &r.output("lstm", "y"), 1e-5);
    assert_close("lstm.h", &h, &r.output("lstm", "h"), 1e-5);
    assert_close("lstm.c", &c.unwrap(), &r.output("lstm", "c"), 1e-5);

    let bi = r.loaded("lstm_bidir", LSTM::lstm(5, 4, 1, true, false, true).unwrap());
    let (h0, c0) = (r.input("lstm_bidir", "h0"), r.input("lstm_bidir", "c0"));
    let (y, h, c) = bi.forward_with(&r.input("lstm_bidir", "x"), Some((&h0, Some(&c0)))).unwrap();
    assert_close("lstm_bidir.y", &y, &r.output("lstm_bidir", "y"), 1e-5);
    assert_close("lstm_bidir.h", &h, &r.output("lstm_bidir", "h"), 1e-5);
    assert_close("lstm_bidir.c", &c.unwrap(), &r.output("lstm_bidir", "c"), 1e-5);

    let gru = r.loaded("gru", GRU::gru(5, 6, 2, true, false, false).unwrap());
    let h0 = r.input("gru", "h0");
    let (y, h, c) = gru.forward_with(&r.input("gru", "x"), Some((&h0, None))).unwrap();
    assert_close("gru.y", &y, &r.output("gru", "y"), 1e-5);
    assert_close("gru.h", &h, &r.output("gru", "h"), 1e-5);
    assert!(c.is_none());
}

fn mse(y: &Tensor, target: &Tensor) -> Result<Tensor> {
    let d = y.sub(target)?;
    d.mul(&d)?.mean_dims(None, false, None)
}

#[test]
fn optimizers_match_pytorch() {
    let r = Reference::load();
    let (x, target) = (r.input("optim", "x"), r.input("optim", "target"));
    for name in ["sgd", "sgd_plain", "adam", "adamw"] {
        let m = Linear::new(4, 3, true).unwrap();
        m.load_state_dict(&r.state("optim"), true).unwrap();
        enum Opt {
            S(Sgd),
            A(Adam),
        }
        let params = m.parameters();
        let mut opt = match name {
            "sgd" => Opt::S(Sgd::new(params, 0.1).unwrap().momentum(0.9, 0.0, true).unwrap().weight_decay(0.01).unwrap()),
            "sgd_plain" => Opt::S(Sgd::new(params, 0.1).unwrap()),
            "adam" => Opt::A(Adam::adam(params, 0.01).unwrap().weight_decay(0.1).unwrap()),
            _ => Opt::A(Adam::adamw(params, 0.01).unwrap().weight_decay(0.1).unwrap()),
        };
        for _ in 0..3 {
            m.zero_grad();
            let loss = mse(&m.forward(&x).unwrap(), &target).unwrap();
            autograd::backward(&[loss], vec![None], None, false, None).unwrap();
            match &mut opt {
                Opt::S(o) => o.step().unwrap(),
                Opt::A(o) => o.step().unwrap(),
            }
        }
        for (k, t) in m.state_dict() {
            assert_close(&format!("{name}.{k}"), &t, &r.get(&format!("optim.out.{name}.{k}")), 1e-5);
        }
    }
    assert!(Sgd::new(vec![], 0.1).unwrap().momentum(0.0, 0.0, true).is_err(), "nesterov without momentum");
}

fn bytes_of(t: &Tensor) -> Vec<u8> {
    let c = t.contiguous().unwrap();
    // SAFETY: `c` is contiguous with numel * itemsize bytes at data_ptr.
    unsafe { std::slice::from_raw_parts(c.data_ptr(), c.numel() * c.dtype().itemsize()) }.to_vec()
}

#[test]
fn pytorch_checkpoints_load_byte_exact() {
    // The same state dict as torch.save and safetensors write it.
    let from_pt = pt::load(fixture("checkpoint.pt")).unwrap();
    let from_st = safetensors::mmap_file(fixture("checkpoint.safetensors")).unwrap();
    let names: Vec<&str> = from_pt.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var", "1.num_batches_tracked", "4.weight", "4.bias"]
    );
    let st: HashMap<_, _> = from_st.into_iter().collect();
    for (k, t) in &from_pt {
        assert_eq!(t.dtype(), st[k].dtype(), "{k}");
        assert_eq!(t.shape(), st[k].shape(), "{k}");
        assert_eq!(bytes_of(t), bytes_of(&st[k]), "{k}");
    }
    // Loads by name into the same architecture, through io::load's sniffing.
    let model = Sequential::new()
        .push(Conv2d::conv2d(1, 4, [3, 3], ConvOptions::new(2).padding(&[1, 1])).unwrap())
        .push(BatchNorm2d::batch_norm2d(4, 1e-5, 0.1, true).unwrap())
        .push(ReLU)
        .push(Flatten::default())
        .push(Linear::new(64, 3, true).unwrap());
    assert_eq!(model.load_state_dict(&io::load(fixture("checkpoint.pt")).unwrap(), true).unwrap(), IncompatibleKeys::default());
    assert_eq!(bytes_of(&model.state_dict()[0].1), bytes_of(&st["0.weight"]));

    // Every dtype, views and a tied pair, against their contiguous values.
    let tensors = pt::load(fixture("tensors.pt")).unwrap();
    let copied = pt::load_from_bytes(&std::fs::read(fixture("tensors.pt")).unwrap()).unwrap();
    let want: HashMap<_, _> = safetensors::load_file(fixture("tensors.safetensors")).unwrap().into_iter().collect();
    assert_eq!(tensors.len(), want.len());
    for ((k, t), (k2, t2)) in tensors.iter().zip(&copied) {
        assert_eq!(k, k2);
        assert_eq!((t.dtype(), t.shape()), (want[k].dtype(), want[k].shape()), "{k}");
        assert_eq!(bytes_of(t), bytes_of(&want[k]), "{k}");
        assert_eq!(bytes_of(t2), bytes_of(&want[k]), "{k} (copied)");
    }
    let get = |n: &str| tensors.iter().find(|(k, _)| k == n).unwrap().1.clone();
    assert_eq!(get("f32_t").strides(), &[1, 6]);
    assert_eq!(get("f32_row").storage_offset(), 12);
    // Tensors that shared a storage in Python share it here.
    assert!(std::sync::Arc::ptr_eq(get("f32").storage(), get("tied").storage()));
    assert!(std::sync::Arc::ptr_eq(get("f32").storage(), get("f32_t").storage()));
    // Writing into a mapped tensor leaves the file as it was.
    get("f64").fill_(ferrotorch::Scalar::Float(9.0)).unwrap();
    assert_eq!(bytes_of(&pt::load(fixture("tensors.pt")).unwrap()[4].1), bytes_of(&want["f64"]));
}

#[test]
fn load_state_dict_reports_keys_and_shapes_as_pytorch() {
    let fc = Linear::new(3, 2, true).unwrap();
    let w = Tensor::zeros(&[2, 3], DType::Float32, ferrotorch::Device::CPU).unwrap();
    let extra = Tensor::zeros(&[1], DType::Float32, ferrotorch::Device::CPU).unwrap();
    let state = vec![("weight".to_string(), w.clone()), ("foo".to_string(), extra)];
    let e = fc.load_state_dict(&state, true).unwrap_err().to_string();
    assert!(e.contains("Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: \"bias\". \n\tUnexpected key(s) in state_dict: \"foo\". "), "{e}");
    let keys = fc.load_state_dict(&state, false).unwrap();
    assert_eq!(keys.missing_keys, ["bias"]);
    assert_eq!(keys.unexpected_keys, ["foo"]);
    let wrong = vec![("weight".to_string(), Tensor::zeros(&[3, 3], DType::Float32, ferrotorch::Device::CPU).unwrap())];
    let e = fc.load_state_dict(&wrong, false).unwrap_err().to_string();
    assert!(
        e.contains("size mismatch for weight: copying a param with shape torch.Size([3, 3]) from checkpoint, the shape in current model is torch.Size([2, 3])."),
        "{e}"
    );
}

#[test]
fn malicious_checkpoints_are_refused() {
    for (file, needle) in [
        ("malicious_system.pt", "blocked"),
        ("malicious_eval.pt", "Unsupported global: GLOBAL eval"),
        ("malicious_stack_global.pt", "Unsupported global: GLOBAL eval"),
        ("malicious_reduce_storage.pt", "unrecognized function"),
        ("malicious_persid.pt", "persistent_load"),
    ] {
        let e = pt::load(fixture(file)).err().unwrap_or_else(|| panic!("{file} loaded")).to_string();
        assert!(e.contains(needle), "{file}: {e}");
    }
}

#[test]
fn garbled_checkpoints_are_errors_not_panics() {
    let good = std::fs::read(fixture("tensors.pt")).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for cut in (0..good.len()).step_by(7) {
        let _ = pt::load_from_bytes(&good[..cut]);
    }
    for _ in 0..2000 {
        let mut bad = good.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() as usize) % bad.len();
            bad[i] = next() as u8;
        }
        // Any result but a panic (a flipped data byte still loads).
        let _ = pt::load_from_bytes(&bad);
    }
    let st = std::fs::read(fixture("tensors.safetensors")).unwrap();
    for cut in (0..st.len()).step_by(5) {
        assert!(safetensors::deserialize(&st[..cut]).is_err());
    }
}

#[test]
fn concurrent_inference_equals_sequential() {
    let r = Reference::load();
    let mha = r.loaded("mha", MultiheadAttention::new(8, 2, true, true).unwrap());
    let model = Sequential::new()
        .push(Conv2d::conv2d(1, 4, [3, 3], ConvOptions::new(2).padding(&[1, 1])).unwrap())
        .push(BatchNorm2d::batch_norm2d(4, 1e-5, 0.1, true).unwrap())
        .push(ReLU)
        .push(Flatten::default())
        .push(Linear::new(64, 3, true).unwrap());
    model.load_state_dict(&pt::load(fixture("checkpoint.pt")).unwrap(), true).unwrap();
    model.eval();
    model.requires_grad_(false).unwrap();
    let inputs: Vec<Tensor> = (0..8).map(|i| Tensor::randn(&[2 + i % 3, 1, 4, 4], DType::Float32, None).unwrap()).collect();
    let seq_in = Tensor::randn(&[2, 4, 8], DType::Float32, None).unwrap();
    let sequential: Vec<(Vec<f32>, Vec<f32>)> =
        inputs.iter().map(|x| (model.forward(x).unwrap().to_vec().unwrap(), mha.forward(&seq_in).unwrap().to_vec().unwrap())).collect();
    let concurrent: Vec<(Vec<f32>, Vec<f32>)> = std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .iter()
            .map(|x| {
                let (model, mha, seq_in) = (&model, &mha, &seq_in);
                s.spawn(move || {
                    let _g = no_grad();
                    let mut last = None;
                    for _ in 0..20 {
                        last = Some((model.forward(x).unwrap().to_vec().unwrap(), mha.forward(seq_in).unwrap().to_vec().unwrap()));
                    }
                    last.unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(sequential, concurrent);
}

#[test]
fn tensors_and_modules_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Tensor>();
    check::<Linear>();
    check::<Conv>();
    check::<BatchNorm>();
    check::<Dropout>();
    check::<MultiheadAttention>();
    check::<Recurrent>();
    check::<Sequential>();
    check::<Box<dyn Module>>();
}
