__kernel void decompress(__global long *_kernel_context, __constant uchar *_constant_region, __local uchar *_local_region, __global int *_atomics, __global uchar *kvFloats, __global uchar *kvHalves, __global uchar *kvBytes, __private int dtype, __global uchar *wkvB, __global uchar *kvFull, __global uchar *attnMeta, __private int rows, __private int seqs, __private int capacity, __private int blockSize, __private int heads, __private int dn, __private int dv, __private int dc, __private int dr)
{
  ulong ul_0, ul_1, ul_2, ul_3, ul_16, ul_21, ul_37, ul_51, ul_57, ul_66;
  bool b_31;
  int i_4, i_5, i_6, i_7, i_8, i_9, i_10, i_11, i_12, i_17, i_22, i_23, i_24, i_25, i_26, i_27, i_28, i_29, i_30, i_32, i_33, i_38, i_39, i_40, i_41, i_42, i_43, i_44, i_46, i_47, i_53, i_60, i_61, i_62, i_67, i_68, i_69;
  long l_13, l_14, l_15, l_18, l_19, l_20, l_34, l_35, l_36, l_48, l_49, l_50, l_54, l_55, l_56, l_63, l_64, l_65;
  float f_45, f_52, f_58, f_59;

  // BLOCK 0
  ul_0  =  (ulong) kvFloats;
  ul_1  =  (ulong) wkvB;
  ul_2  =  (ulong) kvFull;
  ul_3  =  (ulong) attnMeta;
  i_4  =  get_global_size(2);
  i_5  =  get_global_size(1);
  i_6  =  get_global_size(0);
  i_7  =  get_global_id(2);
  i_8  =  get_global_id(1);
  i_9  =  get_global_id(0);
  // BLOCK 1 MERGES [0 14 ]
  i_10  =  i_9;
  for(;i_10 < 1;)
  {
    // BLOCK 2
    i_11  =  i_10 << 2;
    i_12  =  i_11 + 3;
    l_13  =  (long) i_12;
    l_14  =  l_13 << 2;
    l_15  =  l_14 + 16L;
    ul_16  =  ul_3 + l_15;
    i_17  =  i_11 + 2;
    l_18  =  (long) i_17;
    l_19  =  l_18 << 2;
    l_20  =  l_19 + 16L;
    ul_21  =  ul_3 + l_20;
    // BLOCK 3 MERGES [2 13 ]
    i_22  =  i_8;
    for(;i_22 < 256;)
    {
      // BLOCK 4
      i_23  =  i_22 % 256;
      i_24  =  i_22 >> 31;
      i_25  =  i_24 >> 24;
      i_26  =  i_25 + i_22;
      i_27  =  i_26 >> 8;
      // BLOCK 5 MERGES [4 12 ]
      i_28  =  i_7;
      for(;i_28 < 4096;)
      {
        // BLOCK 6
        i_29  =  *((__global int *) ul_21);
        i_30  =  i_4 + i_28;
        b_31  =  i_22 < i_29;
        if(b_31)
        {
          // BLOCK 7
          i_32  =  *((__global int *) ul_16);
          i_33  =  i_27 + i_32;
          l_34  =  (long) i_33;
          l_35  =  l_34 << 2;
          l_36  =  l_35 + 16L;
          ul_37  =  ul_3 + l_36;
          i_38  =  *((__global int *) ul_37);
          i_39  =  i_38 << 8;
          i_40  =  i_39 + i_23;
          i_41  =  i_40 << 9;
          i_42  =  i_40 << 6;
          i_43  =  i_41 + i_42;
          i_44  =  i_28 << 9;
          // BLOCK 8 MERGES [7 9 ]
          f_45  =  0.0F;
          i_46  =  0;
          for(;i_46 < 512;)
          {
            // BLOCK 9
            i_47  =  i_44 + i_46;
            l_48  =  (long) i_47;
            l_49  =  l_48 << 2;
            l_50  =  l_49 + 16L;
            ul_51  =  ul_1 + l_50;
            f_52  =  *((__global float *) ul_51);
            i_53  =  i_43 + i_46;
            l_54  =  (long) i_53;
            l_55  =  l_54 << 2;
            l_56  =  l_55 + 16L;
            ul_57  =  ul_0 + l_56;
            f_58  =  *((__global float *) ul_57);
            f_59  =  fma(f_52, f_58, f_45);
            i_60  =  i_46 + 1;
            f_45  =  f_59;
            i_46  =  i_60;
          }  // B8
          // BLOCK 10
          i_61  =  i_40 << 12;
          i_62  =  i_61 + i_28;
          l_63  =  (long) i_62;
          l_64  =  l_63 << 2;
          l_65  =  l_64 + 16L;
          ul_66  =  ul_2 + l_65;
          *((__global float *) ul_66)  =  f_45;
        }  // B6
        else
        {
          // BLOCK 11
        }  // B6
        // BLOCK 12 MERGES [11 10 ]
        i_67  =  i_30;
        i_28  =  i_67;
      }  // B5
      // BLOCK 13
      i_68  =  i_5 + i_22;
      i_22  =  i_68;
    }  // B3
    // BLOCK 14
    i_69  =  i_6 + i_10;
    i_10  =  i_69;
  }  // B1
  // BLOCK 15
  return;
}
