# Generates the small sample files in format/npy/testdata and format/libsvm/testdata.
import sys
import numpy as np, scipy.sparse as sp
from numpy.lib import format as fmt
from sklearn.datasets import dump_svmlight_file
npy, svm = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(2026)
np.save(npy + '/f4_3x4.npy', rng.standard_normal((3, 4)).astype('<f4'))
np.save(npy + '/be_i2_5.npy', np.array([-300, -1, 0, 1, 300], dtype='>i2'))
np.save(npy + '/fortran_f8_2x3.npy', np.asfortranarray(np.arange(6).reshape(2, 3) / 4))
with open(npy + '/v2_u1_4x2.npy', 'wb') as f:
    fmt.write_array(f, np.arange(8, dtype='u1').reshape(4, 2), version=(2, 0))
with open(npy + '/v3_b1_3.npy', 'wb') as f:
    fmt.write_array(f, np.array([True, False, True]), version=(3, 0))
np.save(npy + '/str_U4.npy', np.array(['ab', 'héé', '', 'wxyz']))
np.save(npy + '/c8_2.npy', np.array([1 + 2j, -0.5j], dtype='<c8'))
arrs = dict(x=rng.standard_normal((4, 2)).astype('<f4'), y=np.arange(4, dtype='<i8'))
np.savez(npy + '/stored.npz', **arrs)
np.savez_compressed(npy + '/deflated.npz', **arrs)
X = sp.random(6, 8, density=0.4, format='csr', random_state=rng)
y = rng.integers(0, 3, 6).astype(float)
dump_svmlight_file(X, y, svm + '/sklearn_zero.svm', comment='zero-based, from scikit-learn')
dump_svmlight_file(X, y, svm + '/sklearn_one_qid.svm', zero_based=False, query_id=np.array([1, 1, 2, 2, 3, 3]))
Y = sp.csr_matrix(rng.random((6, 4)) < 0.4)
dump_svmlight_file(X, Y, svm + '/sklearn_multi.svm', multilabel=True)
# float16 (read as float32): big-endian, Fortran order, NaN, infinity, -0, a subnormal
np.save(npy + '/fortran_be_f2_2x3.npy', np.asfortranarray(np.array([[1, -2, np.nan], [np.inf, -0.0, 6e-8]], dtype='>f2')))
# datetime64 and timedelta64 (read as datetime and duration ticks of 100 ns)
np.savez(npy + '/time.npz', t=np.array(['2024-01-02T03:04:05.123456', '0001-01-01', '9999-12-31T23:59:59.999999'], dtype='<M8[us]'),
         d=np.array(['2024-02-29', '1969-12-31', '1970-01-01'], dtype='>M8[D]'), dt=np.array([-5, 0, 86400000], dtype='<m8[ms]'))
