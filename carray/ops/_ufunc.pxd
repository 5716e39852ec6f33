# The elementwise dispatchers, for the Array type's operators (carray.core._array looks them up
# on first use) and other front ends: kind is a Kind of the op table, code that kind's member.
cdef object binary(int kind, int code, object x, object y, object out)
cdef object unary(int kind, int code, object x, object out)
