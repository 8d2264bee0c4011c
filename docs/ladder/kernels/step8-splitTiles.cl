__kernel void splitTiles(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *qLat, __global uchar *q, __global uchar *kvFloats, __global uchar *kvHalves, __global uchar *kvBytes, __private int dtype, __global uchar *sTile, __global uchar *oPart, __global uchar *mlPart, __global uchar *attnMeta, __private int rows, __private int blockSize, __private int heads, __private int dn, __private int dr, __private int dc, __private float scale, __private int tileSize, __private int numSplits)
{
  ulong ul_0, ul_1, ul_2, ul_3, ul_4, ul_5, ul_6, ul_7, ul_21, ul_25, ul_44, ul_72, ul_82, ul_92, ul_97, ul_110, ul_116, ul_123, ul_133, ul_158, ul_169, ul_180, ul_190, ul_203, ul_208, ul_226, ul_236, ul_241;
  bool b_136, b_140, b_143;
  double d_150, d_151, d_195, d_196;
  int i_8, i_9, i_10, i_11, i_12, i_13, i_14, i_15, i_16, i_17, i_26, i_27, i_28, i_29, i_30, i_31, i_32, i_33, i_34, i_35, i_36, i_37, i_38, i_39, i_40, i_45, i_46, i_47, i_48, i_49, i_50, i_51, i_52, i_53, i_54, i_55, i_58, i_59, i_60, i_62, i_63, i_64, i_65, i_66, i_67, i_68, i_73, i_74, i_75, i_76, i_77, i_78, i_83, i_84, i_85, i_87, i_88, i_94, i_103, i_105, i_106, i_112, i_113, i_118, i_119, i_128, i_129, i_135, i_139, i_145, i_147, i_153, i_154, i_161, i_164, i_165, i_171, i_172, i_173, i_174, i_175, i_176, i_181, i_182, i_183, i_184, i_185, i_186, i_191, i_192, i_193, i_198, i_199, i_205, i_214, i_216, i_217, i_218, i_221, i_222, i_229, i_230, i_232, i_237, i_242, i_243, i_244;
  long l_18, l_19, l_20, l_22, l_23, l_24, l_41, l_42, l_43, l_69, l_70, l_71, l_79, l_80, l_81, l_89, l_90, l_91, l_95, l_96, l_107, l_108, l_109, l_114, l_115, l_120, l_121, l_122, l_130, l_131, l_132, l_155, l_156, l_157, l_166, l_167, l_168, l_177, l_178, l_179, l_187, l_188, l_189, l_200, l_201, l_202, l_206, l_207, l_223, l_224, l_225, l_233, l_234, l_235, l_238, l_239, l_240;
  char ch_98, ch_117, ch_209;
  float f_56, f_57, f_61, f_86, f_93, f_99, f_100, f_101, f_102, f_104, f_111, f_124, f_125, f_126, f_127, f_134, f_137, f_138, f_141, f_142, f_144, f_146, f_148, f_149, f_152, f_159, f_160, f_162, f_163, f_170, f_194, f_197, f_204, f_210, f_211, f_212, f_213, f_215, f_219, f_220, f_227, f_228, f_231;

  // BLOCK 0
  ul_0  =  (ulong) qLat;
  ul_1  =  (ulong) q;
  ul_2  =  (ulong) kvFloats;
  ul_3  =  (ulong) kvBytes;
  ul_4  =  (ulong) sTile;
  ul_5  =  (ulong) oPart;
  ul_6  =  (ulong) mlPart;
  ul_7  =  (ulong) attnMeta;
  i_8  =  get_global_size(2);
  i_9  =  get_global_size(1);
  i_10  =  get_global_size(0);
  i_11  =  get_global_id(2);
  i_12  =  get_global_id(1);
  i_13  =  get_global_id(0);
  // BLOCK 1 MERGES [0 55 ]
  i_14  =  i_13;
  for(;i_14 < 1;)
  {
    // BLOCK 2
    i_15  =  i_14 << 4;
    i_16  =  i_14 << 1;
    i_17  =  i_16 + 1;
    l_18  =  (long) i_17;
    l_19  =  l_18 << 2;
    l_20  =  l_19 + 16L;
    ul_21  =  ul_7 + l_20;
    l_22  =  (long) i_16;
    l_23  =  l_22 << 2;
    l_24  =  l_23 + 16L;
    ul_25  =  ul_7 + l_24;
    // BLOCK 3 MERGES [2 54 ]
    i_26  =  i_12;
    for(;i_26 < 16;)
    {
      // BLOCK 4
      i_27  =  i_15 + i_26;
      i_28  =  i_27 << 7;
      i_29  =  i_27 << 6;
      i_30  =  i_28 + i_29;
      i_31  =  i_30 + 128;
      i_32  =  i_27 << 9;
      i_33  =  i_27 << 3;
      // BLOCK 5 MERGES [4 53 ]
      i_34  =  i_11;
      for(;i_34 < 8;)
      {
        // BLOCK 6
        i_35  =  *((__global int *) ul_25);
        i_36  =  *((__global int *) ul_21);
        i_37  =  i_33 + i_34;
        i_38  =  i_37 << 9;
        // BLOCK 7 MERGES [6 8 ]
        i_39  =  0;
        for(;i_39 < 512;)
        {
          // BLOCK 8
          i_40  =  i_38 + i_39;
          l_41  =  (long) i_40;
          l_42  =  l_41 << 2;
          l_43  =  l_42 + 16L;
          ul_44  =  ul_5 + l_43;
          *((__global float *) ul_44)  =  0.0F;
          i_45  =  i_39 + 1;
          i_39  =  i_45;
        }  // B7
        // BLOCK 9
        i_46  =  i_35 + 1;
        i_47  =  i_35 + 8;
        i_48  =  i_47 >> 31;
        i_49  =  i_48 >> 29;
        i_50  =  i_49 + i_47;
        i_51  =  i_50 >> 3;
        i_52  =  i_51 * i_34;
        i_53  =  i_52 + i_51;
        i_54  =  min(i_46, i_53);
        i_55  =  i_37 << 6;
        // BLOCK 10 MERGES [9 43 ]
        f_56  =  0.0F;
        f_57  =  0.0F;
        i_58  =  i_52;
        for(;i_58 < i_54;)
        {
          // BLOCK 11
          i_59  =  i_54 - i_58;
          i_60  =  min(64, i_59);
          // BLOCK 12 MERGES [11 22 ]
          f_61  =  0.0F;
          i_62  =  0;
          for(;i_62 < i_60;)
          {
            // BLOCK 13
            i_63  =  i_58 + i_62;
            i_64  =  i_63 >> 31;
            i_65  =  i_64 >> 24;
            i_66  =  i_65 + i_63;
            i_67  =  i_66 >> 8;
            i_68  =  i_67 + i_36;
            l_69  =  (long) i_68;
            l_70  =  l_69 << 2;
            l_71  =  l_70 + 16L;
            ul_72  =  ul_7 + l_71;
            i_73  =  *((__global int *) ul_72);
            i_74  =  i_73 << 8;
            i_75  =  i_63 % 256;
            i_76  =  i_74 + i_75;
            i_77  =  i_76 << 1;
            i_78  =  i_77 + 0;
            l_79  =  (long) i_78;
            l_80  =  l_79 << 2;
            l_81  =  l_80 + 16L;
            ul_82  =  ul_2 + l_81;
            i_83  =  i_76 << 9;
            i_84  =  i_76 << 6;
            i_85  =  i_83 + i_84;
            // BLOCK 14 MERGES [13 15 ]
            f_86  =  0.0F;
            i_87  =  0;
            for(;i_87 < 512;)
            {
              // BLOCK 15
              i_88  =  i_32 + i_87;
              l_89  =  (long) i_88;
              l_90  =  l_89 << 2;
              l_91  =  l_90 + 16L;
              ul_92  =  ul_0 + l_91;
              f_93  =  *((__global float *) ul_92);
              i_94  =  i_85 + i_87;
              l_95  =  (long) i_94;
              l_96  =  l_95 + 16L;
              ul_97  =  ul_3 + l_96;
              ch_98  =  *((__global char *) ul_97);
              f_99  =  *((__global float *) ul_82);
              f_100  =  (float) ch_98;
              f_101  =  f_99 * f_100;
              f_102  =  fma(f_101, f_93, f_86);
              i_103  =  i_87 + 1;
              f_86  =  f_102;
              i_87  =  i_103;
            }  // B14
            // BLOCK 16
            // BLOCK 17 MERGES [16 18 ]
            f_104  =  f_86;
            i_105  =  0;
            for(;i_105 < 64;)
            {
              // BLOCK 18
              i_106  =  i_31 + i_105;
              l_107  =  (long) i_106;
              l_108  =  l_107 << 2;
              l_109  =  l_108 + 16L;
              ul_110  =  ul_1 + l_109;
              f_111  =  *((__global float *) ul_110);
              i_112  =  i_105 + 512;
              i_113  =  i_112 + i_85;
              l_114  =  (long) i_113;
              l_115  =  l_114 + 16L;
              ul_116  =  ul_3 + l_115;
              ch_117  =  *((__global char *) ul_116);
              i_118  =  (i_112 < 512) ? 0 : 1;
              i_119  =  i_118 + i_77;
              l_120  =  (long) i_119;
              l_121  =  l_120 << 2;
              l_122  =  l_121 + 16L;
              ul_123  =  ul_2 + l_122;
              f_124  =  *((__global float *) ul_123);
              f_125  =  (float) ch_117;
              f_126  =  f_124 * f_125;
              f_127  =  fma(f_126, f_111, f_104);
              i_128  =  i_105 + 1;
              f_104  =  f_127;
              i_105  =  i_128;
            }  // B17
            // BLOCK 19
            i_129  =  i_55 + i_62;
            l_130  =  (long) i_129;
            l_131  =  l_130 << 2;
            l_132  =  l_131 + 16L;
            ul_133  =  ul_4 + l_132;
            f_134  =  f_104 * 0.13523377F;
            *((__global float *) ul_133)  =  f_134;
            i_135  =  i_62 + 1;
            b_136  =  i_62 == 0;
            if(b_136)
            {
              // BLOCK 20
              f_137  =  f_134;
            }  // B19
            else
            {
              // BLOCK 21
              f_138  =  fmax(f_61, f_134);
              f_137  =  f_138;
            }  // B19
            // BLOCK 22 MERGES [20 21 ]
            i_139  =  i_135;
            f_61  =  f_137;
            i_62  =  i_139;
          }  // B12
          // BLOCK 23
          b_140  =  i_52 == i_58;
          if(b_140)
          {
            // BLOCK 24
            f_141  =  f_61;
          }  // B23
          else
          {
            // BLOCK 25
            f_142  =  fmax(f_56, f_61);
            f_141  =  f_142;
          }  // B23
          // BLOCK 26 MERGES [24 25 ]
          b_143  =  i_52 == i_58;
          if(b_143)
          {
            // BLOCK 27
            f_144  =  f_141;
          }  // B26
          else
          {
            // BLOCK 28
            f_144  =  f_56;
          }  // B26
          // BLOCK 29 MERGES [27 28 ]
          i_145  =  isless(f_141, 0.0F);
          if(i_145 == 1)
          {
            // BLOCK 30
            f_146  =  f_141 * 0.5F;
            i_147  =  isless(f_141, f_146);
            if(i_147 == 1)
            {
              // BLOCK 31
              f_148  =  f_141;
            }  // B30
            else
            {
              // BLOCK 32
              f_148  =  0.0F;
            }  // B30
          }  // B29
          else
          {
            // BLOCK 33
            f_148  =  f_141;
          }  // B29
          // BLOCK 34 MERGES [32 33 31 ]
          f_149  =  f_144 - f_148;
          d_150  =  (double) f_149;
          d_151  =  exp(d_150);
          f_152  =  (float) d_151;
          // BLOCK 35 MERGES [34 36 ]
          i_153  =  0;
          for(;i_153 < 512;)
          {
            // BLOCK 36
            i_154  =  i_153 + i_38;
            l_155  =  (long) i_154;
            l_156  =  l_155 << 2;
            l_157  =  l_156 + 16L;
            ul_158  =  ul_5 + l_157;
            f_159  =  *((__global float *) ul_158);
            f_160  =  f_152 * f_159;
            *((__global float *) ul_158)  =  f_160;
            i_161  =  i_153 + 1;
            i_153  =  i_161;
          }  // B35
          // BLOCK 37
          f_162  =  f_57 * f_152;
          // BLOCK 38 MERGES [37 42 ]
          f_163  =  f_162;
          i_164  =  0;
          for(;i_164 < i_60;)
          {
            // BLOCK 39
            i_165  =  i_164 + i_55;
            l_166  =  (long) i_165;
            l_167  =  l_166 << 2;
            l_168  =  l_167 + 16L;
            ul_169  =  ul_4 + l_168;
            f_170  =  *((__global float *) ul_169);
            i_171  =  i_58 + i_164;
            i_172  =  i_171 >> 31;
            i_173  =  i_172 >> 24;
            i_174  =  i_173 + i_171;
            i_175  =  i_174 >> 8;
            i_176  =  i_175 + i_36;
            l_177  =  (long) i_176;
            l_178  =  l_177 << 2;
            l_179  =  l_178 + 16L;
            ul_180  =  ul_7 + l_179;
            i_181  =  *((__global int *) ul_180);
            i_182  =  i_181 << 8;
            i_183  =  i_171 % 256;
            i_184  =  i_182 + i_183;
            i_185  =  i_184 << 1;
            i_186  =  i_185 + 0;
            l_187  =  (long) i_186;
            l_188  =  l_187 << 2;
            l_189  =  l_188 + 16L;
            ul_190  =  ul_2 + l_189;
            i_191  =  i_184 << 9;
            i_192  =  i_184 << 6;
            i_193  =  i_191 + i_192;
            f_194  =  f_170 - f_148;
            d_195  =  (double) f_194;
            d_196  =  exp(d_195);
            f_197  =  (float) d_196;
            // BLOCK 40 MERGES [39 41 ]
            i_198  =  0;
            for(;i_198 < 512;)
            {
              // BLOCK 41
              i_199  =  i_198 + i_38;
              l_200  =  (long) i_199;
              l_201  =  l_200 << 2;
              l_202  =  l_201 + 16L;
              ul_203  =  ul_5 + l_202;
              f_204  =  *((__global float *) ul_203);
              i_205  =  i_193 + i_198;
              l_206  =  (long) i_205;
              l_207  =  l_206 + 16L;
              ul_208  =  ul_3 + l_207;
              ch_209  =  *((__global char *) ul_208);
              f_210  =  *((__global float *) ul_190);
              f_211  =  (float) ch_209;
              f_212  =  f_210 * f_211;
              f_213  =  fma(f_212, f_197, f_204);
              *((__global float *) ul_203)  =  f_213;
              i_214  =  i_198 + 1;
              i_198  =  i_214;
            }  // B40
            // BLOCK 42
            f_215  =  f_163 + f_197;
            i_216  =  i_164 + 1;
            f_163  =  f_215;
            i_164  =  i_216;
          }  // B38
          // BLOCK 43
          i_217  =  i_58 + 64;
          f_56  =  f_141;
          f_57  =  f_163;
          i_58  =  i_217;
        }  // B10
        // BLOCK 44
        i_218  =  isless(0.0F, f_57);
        if(i_218 == 1)
        {
          // BLOCK 45
          f_219  =  1.0F / f_57;
          f_220  =  f_219;
        }  // B44
        else
        {
          // BLOCK 46
          f_220  =  0.0F;
        }  // B44
        // BLOCK 47 MERGES [45 46 ]
        // BLOCK 48 MERGES [47 49 ]
        i_221  =  0;
        for(;i_221 < 512;)
        {
          // BLOCK 49
          i_222  =  i_221 + i_38;
          l_223  =  (long) i_222;
          l_224  =  l_223 << 2;
          l_225  =  l_224 + 16L;
          ul_226  =  ul_5 + l_225;
          f_227  =  *((__global float *) ul_226);
          f_228  =  f_220 * f_227;
          *((__global float *) ul_226)  =  f_228;
          i_229  =  i_221 + 1;
          i_221  =  i_229;
        }  // B48
        // BLOCK 50
        i_230  =  isless(0.0F, f_57);
        if(i_230 == 1)
        {
          // BLOCK 51
          f_231  =  f_56;
        }  // B50
        else
        {
          // BLOCK 52
          f_231  =  0.0F;
        }  // B50
        // BLOCK 53 MERGES [51 52 ]
        i_232  =  i_37 << 1;
        l_233  =  (long) i_232;
        l_234  =  l_233 << 2;
        l_235  =  l_234 + 16L;
        ul_236  =  ul_6 + l_235;
        *((__global float *) ul_236)  =  f_231;
        i_237  =  i_232 + 1;
        l_238  =  (long) i_237;
        l_239  =  l_238 << 2;
        l_240  =  l_239 + 16L;
        ul_241  =  ul_6 + l_240;
        *((__global float *) ul_241)  =  f_57;
        i_242  =  i_8 + i_34;
        i_34  =  i_242;
      }  // B5
      // BLOCK 54
      i_243  =  i_9 + i_26;
      i_26  =  i_243;
    }  // B3
    // BLOCK 55
    i_244  =  i_10 + i_14;
    i_14  =  i_244;
  }  // B1
  // BLOCK 56
  return;
}
