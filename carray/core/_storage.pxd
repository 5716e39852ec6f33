from cpython.buffer cimport Py_buffer

cdef class Storage:
    """The bytes behind one or more arrays: owned host memory, a foreign buffer, or (later) a
    device buffer. Views share one Storage; it is freed when the last of them goes."""
    cdef char* ptr              # host address of byte 0, NULL for device memory
    cdef Py_ssize_t nbytes
    cdef str device             # "cpu" for host memory
    cdef bint owns_host         # ptr came from host_alloc and goes back to host_free
    cdef bint has_view          # `view` holds an imported buffer to release
    cdef Py_buffer view
    cdef object keepalive       # an object that must outlive the memory (DLPack capsule, exporter)
    cdef object handle          # a device buffer object (OpenCL), None for host memory
    cdef void* dl_managed       # a DLPack managed tensor whose deleter runs on free
    cdef bint dl_versioned
    cdef size_t handle_ptr      # handle's address as kernels take it (OpenCL: its cl_mem), 0
                                # until the backend reads it (carray.opencl._ewfast)

cdef Storage new_host_storage(Py_ssize_t nbytes)
cdef Storage storage_from_buffer(object obj, Py_buffer* view)
cdef void* host_alloc(Py_ssize_t nbytes) except NULL
cdef void host_free(void* ptr, Py_ssize_t nbytes) noexcept
