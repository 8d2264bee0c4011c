/**
 * A layer's weights: {@link org.tornadomla.weights.MlaWeights} (immutable; loaded from safetensors by Hugging Face
 * names, sharded or not, or random for tests), each projection a {@link org.tornadomla.weights.Weight} held as
 * f32, bf16 or DeepSeek's block-scaled FP8 ({@link org.tornadomla.weights.WeightDtype}); the safetensors reader
 * and writer.
 */
package org.tornadomla.weights;
