# float32 and bfloat16 matrix products of the method's 512-wide layers at a batch of 1,024, one thread:
#   python experiments/results/making_forced_moves/bf16_matmul.py
import torch, time
torch.set_num_threads(1)
for dt in (torch.float32, torch.bfloat16):
    a=torch.randn(512,512,dtype=dt); x=torch.randn(1024,512,dtype=dt)
    for _ in range(20): x@a
    t=time.time(); n=200
    for _ in range(n): x@a
    dtm=(time.time()-t)/n; print(dt, f"{2*1024*512*512/dtm/1e9:.1f} GFLOP/s")
print(torch.__version__, torch.backends.mkldnn.is_available())
