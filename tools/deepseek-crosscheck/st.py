"""Minimal safetensors reader/writer (numpy): F32/BF16/F16, and F8_E4M3 as raw uint8 codes."""
import json, struct
import numpy as np

def save(path, tensors, dtypes=None):
    """tensors: name -> array; dtypes: name -> "F32" (default), "BF16" (values must be bf16-exact) or
    "F8_E4M3" (a uint8 array of e4m3 codes, written as they are)."""
    header, off, blobs = {}, 0, []
    for name, a in tensors.items():
        dt = (dtypes or {}).get(name, "F32")
        if dt == "F8_E4M3":
            a = np.ascontiguousarray(a, dtype=np.uint8); b = a.tobytes()
        elif dt == "BF16":
            a = np.ascontiguousarray(a, dtype=np.float32)
            bits = a.view(np.uint32)
            assert not np.any(bits & 0xFFFF), name + ": values are not bf16-exact"
            b = (bits >> 16).astype('<u2').tobytes()
        else:
            a = np.ascontiguousarray(a, dtype=np.float32); b = a.astype('<f4').tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        off += len(b); blobs.append(b)
    h = json.dumps(header).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h))); f.write(h)
        for b in blobs: f.write(b)

def load(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n)); data = f.read()
    out = {}
    for name, m in header.items():
        if name == "__metadata__": continue
        s, e = m["data_offsets"]; raw = data[s:e]
        if m["dtype"] == "F32": a = np.frombuffer(raw, '<f4')
        elif m["dtype"] == "F16": a = np.frombuffer(raw, '<f2').astype(np.float32)
        elif m["dtype"] == "BF16": a = (np.frombuffer(raw, '<u2').astype(np.uint32) << 16).view(np.float32)
        elif m["dtype"] == "F8_E4M3": a = np.frombuffer(raw, np.uint8)
        else: raise ValueError(m["dtype"])
        out[name] = a.reshape(m["shape"]).copy()
    return out
