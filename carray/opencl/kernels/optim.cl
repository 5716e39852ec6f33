// Plain SGD's update, p -= lr * g, for $n parameters of type $t in one launch, matching
// carray/cpu/_nn.pyx: sgd_step. Work item e updates element e of the concatenation of the
// parameters (parameter k has n_k elements, from offsets po_k and go_k of its buffers).

#define T $t

// the product rounded before the subtraction, as on the CPU (no fused multiply-add)
#pragma OPENCL FP_CONTRACT OFF

__kernel void sgd_step($params, const T lr)
{
    long e = get_global_id(0);
$body
}
