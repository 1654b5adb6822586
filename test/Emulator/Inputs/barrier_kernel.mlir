// out[t] = in[t] + in[(t + 1) % 256] through shared memory: each thread
// reads a value another thread wrote, which a barrier must order (thread 31
// reads what warp 1 writes).
gpu.module @kernels {
  gpu.func @shift_sum(%in: memref<256xf32>, %out: memref<256xf32>)
      workgroup(%tile: memref<256xf32, #gpu.address_space<workgroup>>)
      kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %c1 = arith.constant 1 : index
    %c255 = arith.constant 255 : index
    %tid = gpu.thread_id x
    %mine = memref.load %in[%tid] : memref<256xf32>
    memref.store %mine, %tile[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %next = arith.addi %tid, %c1 : index
    %wrapped = arith.andi %next, %c255 : index
    %theirs = memref.load %tile[%wrapped] : memref<256xf32, #gpu.address_space<workgroup>>
    %sum = arith.addf %mine, %theirs : f32
    memref.store %sum, %out[%tid] : memref<256xf32>
    gpu.return
  }
}
