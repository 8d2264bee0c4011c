package org.tornadomla.cli;

import org.tornadomla.attention.AttentionOptions;
import org.tornadomla.attention.AttentionPath;
import org.tornadomla.cache.CacheDtype;
import picocli.CommandLine.Option;

/** The options every command that runs the layer shares: cache storage and the tiled path's tiling. */
public final class KernelOptions {
    @Option(names = "--cache-dtype", defaultValue = "f32", description = "latent cache storage: f32 or bf16 (default: ${DEFAULT-VALUE})")
    String cacheDtype;

    @Option(names = "--tile", defaultValue = "" + AttentionOptions.DEFAULT_TILE, description = "tiled path: tile size Bc (default: ${DEFAULT-VALUE})")
    int tile;

    @Option(names = "--splits", defaultValue = "" + AttentionOptions.DEFAULT_SPLITS, description = "tiled path: KV splits (default: ${DEFAULT-VALUE})")
    int splits;

    CacheDtype dtype() {
        return CacheDtype.parse(cacheDtype);
    }

    AttentionOptions options(AttentionPath path) {
        return new AttentionOptions(path, tile, splits);
    }
}
