/* LAPACK's complex double Cholesky (Debian's liblapack, reference or OpenBLAS through
 * the alternatives), declared here because Debian 12 ships no lapacke.h. The Fortran
 * calling convention: every argument by pointer, matrices column-major, and gfortran's
 * hidden length of each CHARACTER argument appended by value (omitting it works until
 * the compiler turns the call into a tail call; declared, it is always right). */
#ifndef GPURADAR_KERNELS_PASSIVE_CPU_LAPACK_CHOLESKY_H
#define GPURADAR_KERNELS_PASSIVE_CPU_LAPACK_CHOLESKY_H

#include <complex>
#include <cstddef>
#include <stdexcept>
#include <string>

extern "C" {
//! A = L L^H (uplo 'L') of the n x n Hermitian positive definite A, in place; info > 0:
//! the leading minor of that order is not positive definite (or holds NaN).
void zpotrf_(const char* uplo,
             const int* n,
             std::complex<double>* a,
             const int* lda,
             int* info,
             std::size_t uplo_len);
//! Solves A X = B with zpotrf_'s factor, B (n x nrhs) overwritten by X.
void zpotrs_(const char* uplo,
             const int* n,
             const int* nrhs,
             const std::complex<double>* a,
             const int* lda,
             std::complex<double>* b,
             const int* ldb,
             int* info,
             std::size_t uplo_len);
}

namespace gpuradar::kernels::detail {

//! LAPACK's info < 0 names a bad argument: a bug here, never the data's fault.
inline void lapack_check_args(int info, const char* routine)
{
    if (info < 0)
        throw std::logic_error(std::string(routine) + ": argument " +
                               std::to_string(-info) + " rejected by LAPACK");
}

/*! Cholesky factor of the n x n Hermitian matrix a (row-major or column-major: LAPACK
 * reads a row-major Hermitian matrix as its conjugate, which is Hermitian positive
 * definite exactly when a is, and lapack_cholesky_solve() undoes the conjugation).
 * False when a is not positive definite. */
inline bool lapack_cholesky(std::complex<double>* a, int n)
{
    int info = 0;
    zpotrf_("L", &n, a, &n, &info, 1);
    lapack_check_args(info, "zpotrf");
    return info == 0;
}

/*! Solves a x = y in place with the factor from lapack_cholesky(a), a row-major, for
 * nrhs right-hand sides of n stored one after the other (y[r n + i]). The factor is
 * conj(a)'s, so conj(a) conj(x) = conj(y) is what LAPACK solves. */
inline void lapack_cholesky_solve(const std::complex<double>* factor,
                                  int n,
                                  std::complex<double>* y,
                                  int nrhs = 1)
{
    const std::size_t total = std::size_t(n) * std::size_t(nrhs);
    for (std::size_t i = 0; i < total; ++i)
        y[i] = std::conj(y[i]);
    int info = 0;
    zpotrs_("L", &n, &nrhs, factor, &n, y, &n, &info, 1);
    lapack_check_args(info, "zpotrs");
    for (std::size_t i = 0; i < total; ++i)
        y[i] = std::conj(y[i]);
}

} // namespace gpuradar::kernels::detail

#endif
