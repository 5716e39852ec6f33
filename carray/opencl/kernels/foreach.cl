// An optimizer update of up to $n parameters of type $t in one launch ("foreach"), matching the
// CPU's composition of elementwise ops step by step (no fused multiply-add, so every product is
// rounded as the CPU rounds it). Work item e updates element e of the concatenation of the
// parameters: parameter k has n_k elements and $arrays arrays (the parameter, its gradient,
// its state), each read from its buffer's offset, and its own scalars; the update body sees
// them under their short names (p, g, m, v, buf) and the shared scalars.

#define T $t
$defines

#pragma OPENCL FP_CONTRACT OFF

__kernel void $kname($params)
{
    long e = get_global_id(0);
$body
}
