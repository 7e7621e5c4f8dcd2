/*
 * faiss_c_shim.cpp - the subset of the official FAISS C API that coderag
 * calls, implemented on the C++ library for systems (Debian) that ship
 * libfaiss.a and the c_api headers but no libfaiss_c. Signatures come from
 * the shipped headers; conventions follow the official implementation:
 * 0 on success, FAISS_EXCEPT (-2) for faiss::FaissException, STD_EXCEPT (-4)
 * for other std::exception, UNKNOWN_EXCEPT (-1) otherwise, with the message
 * kept per thread for faiss_get_last_error.
 *
 * Only compiled when libfaiss_c is absent (see CMakeLists.txt).
 */
#include <faiss/c_api/AutoTune_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/IndexFlat_c.h>
#include <faiss/c_api/MetaIndexes_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/impl/AuxIndexStructures_c.h>
#include <faiss/c_api/index_factory_c.h>
#include <faiss/c_api/index_io_c.h>

#include <faiss/AutoTune.h>
#include <faiss/Index.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexIDMap.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>

#include <exception>
#include <string>

namespace
{

/* Per-thread like errno: the C API has no context object to hang it on. */
thread_local std::string last_error;

/* Runs f, translating exceptions into the C API's codes. */
template <typename F> int guard(F &&f)
{
    try {
        f();
        return OK;
    } catch (const faiss::FaissException &e) {
        last_error = e.what();
        return FAISS_EXCEPT;
    } catch (const std::exception &e) {
        last_error = e.what();
        return STD_EXCEPT;
    } catch (...) {
        last_error = "Unknown error";
        return UNKNOWN_EXCEPT;
    }
}

faiss::Index *ix(FaissIndex *p)
{
    return reinterpret_cast<faiss::Index *>(p);
}

const faiss::Index *ix(const FaissIndex *p)
{
    return reinterpret_cast<const faiss::Index *>(p);
}

/* The C handle is always the faiss::Index base pointer, so derived pointers
 * go through an explicit upcast before the reinterpret. */
FaissIndex *handle(faiss::Index *p)
{
    return reinterpret_cast<FaissIndex *>(p);
}

/* FaissIndexIDMap(2) alias FaissIndex: find the IDMap behind the base. */
faiss::IndexIDMap *idmap(FaissIndex *p)
{
    return dynamic_cast<faiss::IndexIDMap *>(ix(p));
}

const faiss::IndexIDMap *idmap(const FaissIndex *p)
{
    return dynamic_cast<const faiss::IndexIDMap *>(ix(p));
}

} /* namespace */

extern "C" {

/* ---------------------------------------------------------------- errors */

const char *faiss_get_last_error()
{
    return last_error.empty() ? nullptr : last_error.c_str();
}

/* ---------------------------------------------------------------- Index */

void faiss_Index_free(FaissIndex *obj)
{
    delete ix(obj);
}

int faiss_Index_d(const FaissIndex *obj)
{
    return ix(obj)->d;
}

int faiss_Index_is_trained(const FaissIndex *obj)
{
    return ix(obj)->is_trained;
}

idx_t faiss_Index_ntotal(const FaissIndex *obj)
{
    return ix(obj)->ntotal;
}

FaissMetricType faiss_Index_metric_type(const FaissIndex *obj)
{
    return static_cast<FaissMetricType>(ix(obj)->metric_type);
}

int faiss_Index_train(FaissIndex *index, idx_t n, const float *x)
{
    return guard([&] { ix(index)->train(n, x); });
}

int faiss_Index_add(FaissIndex *index, idx_t n, const float *x)
{
    return guard([&] { ix(index)->add(n, x); });
}

int faiss_Index_add_with_ids(FaissIndex *index, idx_t n, const float *x, const idx_t *xids)
{
    return guard([&] { ix(index)->add_with_ids(n, x, xids); });
}

int faiss_Index_search(const FaissIndex *index, idx_t n, const float *x, idx_t k, float *distances,
                       idx_t *labels)
{
    return guard([&] { ix(index)->search(n, x, k, distances, labels); });
}

int faiss_Index_reset(FaissIndex *index)
{
    return guard([&] { ix(index)->reset(); });
}

int faiss_Index_remove_ids(FaissIndex *index, const FaissIDSelector *sel, size_t *n_removed)
{
    return guard([&] {
        size_t n = ix(index)->remove_ids(*reinterpret_cast<const faiss::IDSelector *>(sel));
        if (n_removed) *n_removed = n;
    });
}

int faiss_Index_reconstruct(const FaissIndex *index, idx_t key, float *recons)
{
    return guard([&] { ix(index)->reconstruct(key, recons); });
}

/* ---------------------------------------------------------------- IndexFlat */

int faiss_IndexFlat_new_with(FaissIndexFlat **p_index, idx_t d, FaissMetricType metric)
{
    return guard([&] {
        faiss::Index *p = new faiss::IndexFlat(d, static_cast<faiss::MetricType>(metric));
        *p_index = handle(p);
    });
}

int faiss_IndexFlatIP_new_with(FaissIndexFlatIP **p_index, idx_t d)
{
    return guard([&] {
        faiss::Index *p = new faiss::IndexFlatIP(d);
        *p_index = handle(p);
    });
}

int faiss_IndexFlatL2_new_with(FaissIndexFlatL2 **p_index, idx_t d)
{
    return guard([&] {
        faiss::Index *p = new faiss::IndexFlatL2(d);
        *p_index = handle(p);
    });
}

void faiss_IndexFlat_free(FaissIndexFlat *obj)
{
    delete ix(obj);
}

FaissIndexFlat *faiss_IndexFlat_cast(FaissIndex *index)
{
    faiss::IndexFlat *f = dynamic_cast<faiss::IndexFlat *>(ix(index));
    return f ? handle(f) : nullptr;
}

void faiss_IndexFlat_xb(FaissIndexFlat *index, float **p_xb, size_t *p_size)
{
    faiss::IndexFlat *f = dynamic_cast<faiss::IndexFlat *>(ix(index));
    if (p_xb) *p_xb = f ? f->get_xb() : nullptr;
    if (p_size) *p_size = f ? f->codes.size() / sizeof(float) : 0;
}

void faiss_IndexFlatIP_free(FaissIndexFlatIP *obj)
{
    delete ix(obj);
}

void faiss_IndexFlatL2_free(FaissIndexFlatL2 *obj)
{
    delete ix(obj);
}

/* ---------------------------------------------------------------- IndexIDMap */

int faiss_IndexIDMap_new(FaissIndexIDMap **p_index, FaissIndex *index)
{
    return guard([&] {
        faiss::Index *p = new faiss::IndexIDMap(ix(index));
        *p_index = handle(p);
    });
}

int faiss_IndexIDMap2_new(FaissIndexIDMap2 **p_index, FaissIndex *index)
{
    return guard([&] {
        faiss::Index *p = new faiss::IndexIDMap2(ix(index));
        *p_index = handle(p);
    });
}

int faiss_IndexIDMap_own_fields(const FaissIndexIDMap *obj)
{
    const faiss::IndexIDMap *m = idmap(obj);
    return m ? m->own_fields : 0;
}

void faiss_IndexIDMap_set_own_fields(FaissIndexIDMap *obj, int own)
{
    faiss::IndexIDMap *m = idmap(obj);
    if (m) m->own_fields = own != 0;
}

/* IndexIDMap2 derives from IndexIDMap, so the same accessors serve both. */
int faiss_IndexIDMap2_own_fields(const FaissIndexIDMap2 *obj)
{
    return faiss_IndexIDMap_own_fields(obj);
}

void faiss_IndexIDMap2_set_own_fields(FaissIndexIDMap2 *obj, int own)
{
    faiss_IndexIDMap_set_own_fields(obj, own);
}

FaissIndexIDMap *faiss_IndexIDMap_cast(FaissIndex *index)
{
    faiss::IndexIDMap *m = idmap(index);
    return m ? handle(m) : nullptr;
}

FaissIndex *faiss_IndexIDMap_sub_index(FaissIndexIDMap *index)
{
    faiss::IndexIDMap *m = idmap(index);
    return m ? handle(m->index) : nullptr;
}

void faiss_IndexIDMap_id_map(FaissIndexIDMap *index, idx_t **p_id_map, size_t *p_size)
{
    faiss::IndexIDMap *m = idmap(index);
    if (p_id_map) *p_id_map = m ? m->id_map.data() : nullptr;
    if (p_size) *p_size = m ? m->id_map.size() : 0;
}

/* ---------------------------------------------------------------- factory and I/O */

int faiss_index_factory(FaissIndex **p_index, int d, const char *description,
                        FaissMetricType metric)
{
    return guard([&] {
        *p_index =
            handle(faiss::index_factory(d, description, static_cast<faiss::MetricType>(metric)));
    });
}

int faiss_write_index_fname(const FaissIndex *idx, const char *fname)
{
    return guard([&] { faiss::write_index(ix(idx), fname); });
}

int faiss_read_index_fname(const char *fname, int io_flags, FaissIndex **p_out)
{
    return guard([&] { *p_out = handle(faiss::read_index(fname, io_flags)); });
}

int faiss_write_index(const FaissIndex *idx, FILE *f)
{
    return guard([&] { faiss::write_index(ix(idx), f); });
}

int faiss_read_index(FILE *f, int io_flags, FaissIndex **p_out)
{
    return guard([&] { *p_out = handle(faiss::read_index(f, io_flags)); });
}

/* ---------------------------------------------------------------- IDSelector */

void faiss_IDSelector_free(FaissIDSelector *obj)
{
    delete reinterpret_cast<faiss::IDSelector *>(obj);
}

int faiss_IDSelector_is_member(const FaissIDSelector *sel, idx_t id)
{
    return reinterpret_cast<const faiss::IDSelector *>(sel)->is_member(id);
}

/* Selector handles are base-class pointers too, so the IDSelector functions
 * accept them after a cast on the C side, as with the official library. */
int faiss_IDSelectorRange_new(FaissIDSelectorRange **p_sel, idx_t imin, idx_t imax)
{
    return guard([&] {
        faiss::IDSelector *s = new faiss::IDSelectorRange(imin, imax);
        *p_sel = reinterpret_cast<FaissIDSelectorRange *>(s);
    });
}

void faiss_IDSelectorRange_free(FaissIDSelectorRange *obj)
{
    delete reinterpret_cast<faiss::IDSelector *>(obj);
}

int faiss_IDSelectorBatch_new(FaissIDSelectorBatch **p_sel, size_t n, const idx_t *indices)
{
    return guard([&] {
        faiss::IDSelector *s = new faiss::IDSelectorBatch(n, indices);
        *p_sel = reinterpret_cast<FaissIDSelectorBatch *>(s);
    });
}

/* ---------------------------------------------------------------- ParameterSpace */

/* For run-time parameters without a typed setter in the C API, e.g. HNSW's
 * "efSearch" on an index built by the factory. */
int faiss_ParameterSpace_new(FaissParameterSpace **space)
{
    return guard(
        [&] { *space = reinterpret_cast<FaissParameterSpace *>(new faiss::ParameterSpace()); });
}

void faiss_ParameterSpace_free(FaissParameterSpace *obj)
{
    delete reinterpret_cast<faiss::ParameterSpace *>(obj);
}

int faiss_ParameterSpace_set_index_parameter(const FaissParameterSpace *space, FaissIndex *index,
                                             const char *name, double value)
{
    return guard([&] {
        reinterpret_cast<const faiss::ParameterSpace *>(space)->set_index_parameter(ix(index), name,
                                                                                    value);
    });
}

} /* extern "C" */
