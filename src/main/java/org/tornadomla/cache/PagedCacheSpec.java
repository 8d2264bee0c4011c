package org.tornadomla.cache;

import org.tornadomla.MlaException;

import java.util.Objects;

/**
 * The shape of a paged {@link LatentCache}, built by name so that its four counts cannot be swapped:
 * <pre>{@code
 * PagedCacheSpec spec = PagedCacheSpec.builder()
 *         .maxSequences(8)            // sequences at once
 *         .maxSequenceLength(4096)    // tokens one sequence can hold
 *         .numBlocks(256)             // the pool (default: enough for every sequence at full length)
 *         .blockSize(64)              // tokens per block (default 64, FlashMLA's page)
 *         .dtype(CacheDtype.BF16)     // storage (default bf16, as DeepSeek serves)
 *         .build();
 * }</pre>
 * Checked when built: every count &gt; 0 and the block size at most 1,048,576 tokens. The cache itself checks
 * that its arrays fit in memory when it is made.
 *
 * @param maxSequences      the most sequences the cache holds at once (ids 0 … maxSequences − 1)
 * @param maxSequenceLength the most tokens one sequence can hold (rounded up to whole blocks by the cache)
 * @param numBlocks         blocks in the pool shared by all sequences
 * @param blockSize         tokens per block
 * @param dtype             how the cache stores its numbers
 */
public record PagedCacheSpec(int maxSequences, int maxSequenceLength, int numBlocks, int blockSize, CacheDtype dtype) {
    /** The default block size: FlashMLA's page of 64 tokens. */
    public static final int DEFAULT_BLOCK_SIZE = 64;
    /** The largest block size accepted. */
    public static final int MAX_BLOCK_SIZE = 1 << 20;

    /** Checks the counts (see the class comment). */
    public PagedCacheSpec {
        Objects.requireNonNull(dtype, "dtype");
        if (maxSequences <= 0) throw new MlaException("paged cache: max sequences must be > 0, found " + maxSequences);
        if (maxSequenceLength <= 0) throw new MlaException("paged cache: max sequence length must be > 0 tokens, found " + maxSequenceLength);
        if (blockSize <= 0 || blockSize > MAX_BLOCK_SIZE) {
            throw new MlaException("paged cache: block size must be 1 … " + MAX_BLOCK_SIZE + " tokens, found " + blockSize);
        }
        if (numBlocks <= 0) throw new MlaException("paged cache: the pool needs at least 1 block, found " + numBlocks);
    }

    /** A builder with the defaults: block size {@value #DEFAULT_BLOCK_SIZE}, bf16, a pool for every sequence at full length. */
    public static Builder builder() {
        return new Builder();
    }

    /** Blocks one sequence can hold: ⌈maxSequenceLength / blockSize⌉. */
    public int maxBlocksPerSequence() {
        return (int) ((maxSequenceLength + (long) blockSize - 1) / blockSize);
    }

    /** Builds a {@link PagedCacheSpec} by name; {@link #maxSequences} and {@link #maxSequenceLength} must be set. */
    public static final class Builder {
        private int maxSequences, maxSequenceLength, numBlocks, blockSize = DEFAULT_BLOCK_SIZE;
        /** Which counts were given: an explicit −1 is a count to refuse, not "unset". */
        private boolean hasMaxSequences, hasMaxSequenceLength, hasNumBlocks;
        private CacheDtype dtype = CacheDtype.BF16;

        private Builder() {
        }

        /** The most sequences at once (required). */
        public Builder maxSequences(int n) {
            this.maxSequences = n;
            this.hasMaxSequences = true;
            return this;
        }

        /** The most tokens one sequence holds (required). */
        public Builder maxSequenceLength(int tokens) {
            this.maxSequenceLength = tokens;
            this.hasMaxSequenceLength = true;
            return this;
        }

        /** Blocks in the pool (default: maxSequences × ⌈maxSequenceLength / blockSize⌉, every sequence at full length). */
        public Builder numBlocks(int n) {
            this.numBlocks = n;
            this.hasNumBlocks = true;
            return this;
        }

        /** Tokens per block (default {@value PagedCacheSpec#DEFAULT_BLOCK_SIZE}). */
        public Builder blockSize(int tokens) {
            this.blockSize = tokens;
            return this;
        }

        /** How the cache stores its numbers (default bf16). */
        public Builder dtype(CacheDtype dtype) {
            this.dtype = Objects.requireNonNull(dtype, "dtype");
            return this;
        }

        /** The spec; refused, naming the count, when a required one is not set or a count is out of range. */
        public PagedCacheSpec build() {
            if (!hasMaxSequences) throw new MlaException("paged cache: maxSequences is not set");
            if (!hasMaxSequenceLength) throw new MlaException("paged cache: maxSequenceLength is not set");
            int blocks = numBlocks;
            if (!hasNumBlocks && maxSequences > 0 && maxSequenceLength > 0 && blockSize > 0 && blockSize <= MAX_BLOCK_SIZE) {
                long perSequence = (maxSequenceLength + (long) blockSize - 1) / blockSize;
                long all = perSequence * maxSequences;
                if (all > Integer.MAX_VALUE - 8) {
                    throw new MlaException("paged cache: a default pool for " + maxSequences + " sequences of " + maxSequenceLength
                            + " tokens would need " + all + " blocks; set numBlocks");
                }
                blocks = (int) all;
            }
            return new PagedCacheSpec(maxSequences, maxSequenceLength, blocks, blockSize, dtype);
        }
    }
}
