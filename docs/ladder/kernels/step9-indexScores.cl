__kernel void indexScores(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *qCodes, __global uchar *w, __global uchar *kCodes, __global uchar *kScale, __global uchar *scores, __global uchar *attnMeta, __private int rows, __private int heads, __private int dim, __private int positions, __global uchar *pow2)
{
  ulong ul_0, ul_1, ul_2, ul_3, ul_4, ul_5, ul_6, ul_17, ul_34, ul_38, ul_39, ul_40, ul_41, ul_46, ul_50, ul_51, ul_52, ul_53, ul_84, ul_92, ul_99;
  bool b_20;
  int i_7, i_8, i_9, i_10, i_11, i_12, i_13, i_18, i_19, i_23, i_24, i_26, i_27, i_28, i_30, i_31, i_43, i_80, i_88, i_95, i_100, i_101;
  long l_14, l_15, l_16, l_32, l_33, l_44, l_45, l_81, l_82, l_83, l_89, l_90, l_91, l_96, l_97, l_98;
  char ch_35, ch_36, ch_37, ch_47, ch_48, ch_49, ch_55, ch_56, ch_57, ch_58, ch_59, ch_62, ch_63, ch_64, ch_67, ch_68, ch_69, ch_70, ch_71, ch_74, ch_75, ch_76;
  float f_21, f_22, f_25, f_29, f_42, f_54, f_60, f_61, f_65, f_66, f_72, f_73, f_77, f_78, f_79, f_85, f_86, f_87, f_93, f_94;

  // BLOCK 0
  ul_0  =  (ulong) qCodes;
  ul_1  =  (ulong) w;
  ul_2  =  (ulong) kCodes;
  ul_3  =  (ulong) kScale;
  ul_4  =  (ulong) scores;
  ul_5  =  (ulong) attnMeta;
  ul_6  =  (ulong) pow2;
  i_7  =  get_global_size(1);
  i_8  =  get_global_size(0);
  i_9  =  get_global_id(1);
  i_10  =  get_global_id(0);
  // BLOCK 1 MERGES [0 14 ]
  i_11  =  i_10;
  for(;i_11 < 1;)
  {
    // BLOCK 2
    i_12  =  i_11 << 8;
    i_13  =  i_11 << 1;
    l_14  =  (long) i_13;
    l_15  =  l_14 << 2;
    l_16  =  l_15 + 16L;
    ul_17  =  ul_5 + l_16;
    // BLOCK 3 MERGES [2 13 ]
    i_18  =  i_9;
    for(;i_18 < 256;)
    {
      // BLOCK 4
      i_19  =  *((__global int *) ul_17);
      b_20  =  i_19 < i_18;
      if(b_20)
      {
        // BLOCK 5
        f_21  =  -1.0F / 0.0F;
        f_22  =  f_21;
      }  // B4
      else
      {
        // BLOCK 6
        i_23  =  i_18 << 7;
        i_24  =  i_11 << 6;
        // BLOCK 7 MERGES [6 11 ]
        f_25  =  0.0F;
        i_26  =  0;
        for(;i_26 < 64;)
        {
          // BLOCK 8
          i_27  =  i_24 + i_26;
          i_28  =  i_27 << 7;
          // BLOCK 9 MERGES [8 10 ]
          f_29  =  0.0F;
          i_30  =  0;
          for(;i_30 < 128;)
          {
            // BLOCK 10
            i_31  =  i_28 + i_30;
            l_32  =  (long) i_31;
            l_33  =  l_32 + 16L;
            ul_34  =  ul_0 + l_33;
            ch_35  =  *((__global char *) ul_34);
            ch_36  =  ch_35 & 127;
            ch_37  =  ch_36 >> 3;
            ul_38  =  ch_37 & 4294967295UL;
            ul_39  =  ul_38 << 2;
            ul_40  =  ul_39 + 16L;
            ul_41  =  ul_6 + ul_40;
            f_42  =  *((__global float *) ul_41);
            i_43  =  i_23 + i_30;
            l_44  =  (long) i_43;
            l_45  =  l_44 + 16L;
            ul_46  =  ul_2 + l_45;
            ch_47  =  *((__global char *) ul_46);
            ch_48  =  ch_47 & 127;
            ch_49  =  ch_48 >> 3;
            ul_50  =  ch_49 & 4294967295UL;
            ul_51  =  ul_50 << 2;
            ul_52  =  ul_51 + 16L;
            ul_53  =  ul_6 + ul_52;
            f_54  =  *((__global float *) ul_53);
            ch_55  =  ch_35 & 7;
            ch_56  =  ch_37 + 15;
            ch_57  =  ch_56 >> 4;
            ch_58  =  ch_57 << 3;
            ch_59  =  ch_55 + ch_58;
            f_60  =  (float) ch_59;
            f_61  =  f_42 * f_60;
            ch_62  =  ch_35 >> 7;
            ch_63  =  ch_62 << 1;
            ch_64  =  ch_63 + 1;
            f_65  =  (float) ch_64;
            f_66  =  f_61 * f_65;
            ch_67  =  ch_47 & 7;
            ch_68  =  ch_49 + 15;
            ch_69  =  ch_68 >> 4;
            ch_70  =  ch_69 << 3;
            ch_71  =  ch_67 + ch_70;
            f_72  =  (float) ch_71;
            f_73  =  f_54 * f_72;
            ch_74  =  ch_47 >> 7;
            ch_75  =  ch_74 << 1;
            ch_76  =  ch_75 + 1;
            f_77  =  (float) ch_76;
            f_78  =  f_73 * f_77;
            f_79  =  fma(f_66, f_78, f_29);
            i_80  =  i_30 + 1;
            f_29  =  f_79;
            i_30  =  i_80;
          }  // B9
          // BLOCK 11
          l_81  =  (long) i_27;
          l_82  =  l_81 << 2;
          l_83  =  l_82 + 16L;
          ul_84  =  ul_1 + l_83;
          f_85  =  *((__global float *) ul_84);
          f_86  =  fmax(f_29, 0.0F);
          f_87  =  fma(f_86, f_85, f_25);
          i_88  =  i_26 + 1;
          f_25  =  f_87;
          i_26  =  i_88;
        }  // B7
        // BLOCK 12
        l_89  =  (long) i_18;
        l_90  =  l_89 << 2;
        l_91  =  l_90 + 16L;
        ul_92  =  ul_3 + l_91;
        f_93  =  *((__global float *) ul_92);
        f_94  =  f_93 * f_25;
        f_22  =  f_94;
      }  // B4
      // BLOCK 13 MERGES [5 12 ]
      i_95  =  i_12 + i_18;
      l_96  =  (long) i_95;
      l_97  =  l_96 << 2;
      l_98  =  l_97 + 16L;
      ul_99  =  ul_4 + l_98;
      *((__global float *) ul_99)  =  f_22;
      i_100  =  i_7 + i_18;
      i_18  =  i_100;
    }  // B3
    // BLOCK 14
    i_101  =  i_8 + i_11;
    i_11  =  i_101;
  }  // B1
  // BLOCK 15
  return;
}
