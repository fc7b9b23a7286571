import random, itertools
def prod(s):
    n=1
    for v in s: n*=v
    return n
def inner(shape, frm): return prod(shape[frm:])
def flat(idx, shape):
    o=0
    for i,s in zip(idx,shape): o=o*s+i
    return o
def a2a_lowered(xs, W, s, c, X, Y, tile):
    m=max(s,c)
    ys=[[None]*prod(Y) for _ in range(W)]
    for me in range(W):
        block = X[s]//W if s==c else None
        extent=[]; sX=[]; sY=[]
        for d in range(m+1):
            extent.append(block if (d==s and s==c) else (X[d] if d==c else Y[d]))
            sX.append(inner(X,d+1)); sY.append(inner(Y,d+1))
        mine = me*(block if block is not None else Y[s]); xc = block if block is not None else X[c]
        outer=prod(extent[:m]); run = extent[m]*sY[m]
        for r in range(W):
            for o in range(outer):
                for i in range(0,run,tile):
                    cnt=min(tile,run-i); src=i; dst=i; rest=o; theirs=r*xc
                    if m==s: src+=mine*sX[s]
                    if m==c: dst+=theirs*sY[c]
                    for d in range(m-1,-1,-1):
                        k=rest%extent[d]; rest//=extent[d]
                        src+=(k+mine if d==s else k)*sX[d]; dst+=(k+theirs if d==c else k)*sY[d]
                    assert 0<=src and src+cnt<=len(xs[r]) and 0<=dst and dst+cnt<=len(ys[me])
                    ys[me][dst:dst+cnt]=xs[r][src:src+cnt]
    return ys
def ref(xs,W,s,c,X,Y):
    out=[]
    for me in range(W):
        y=[None]*prod(Y); blk=X[s]//W
        for r in range(W):
            for idx in itertools.product(*[range(v) for v in X]):
                if not (me*blk <= idx[s] < (me+1)*blk): continue
                j=list(idx); j[s]-=me*blk
                if s==c: j[c]+=r*blk
                else: j[c]+=r*X[c]
                y[flat(j,Y)]=xs[r][flat(idx,X)]
        out.append(y)
    return out
random.seed(1); n=0
for W in [1,2,3,5]:
  for R in [1,2,3,4]:
    for s in range(R):
      for c in range(R):
        if s==0 and c==0: continue
        for trial in range(2):
            base=[random.randint(1,3) for _ in range(R)]
            X=list(base); X[s]=base[s]*W
            Y=list(X)
            if s!=c: Y[s]=X[s]//W; Y[c]=X[c]*W
            xs=[[1000*r+k for k in range(prod(X))] for r in range(W)]
            e=ref(xs,W,s,c,X,Y)
            for tile in [1,3,7,64]:
                assert a2a_lowered(xs,W,s,c,X,Y,tile)==e,(W,R,s,c,X,Y,tile); n+=1
print("all_to_all along dims: ok", n)
# all_gather / reduce_scatter along dim d (out of place and in place index maps)
for W in [1,2,3,7]:
  for R in [1,2,3,4]:
    for d in range(1,R):
      base=[random.randint(1,3) for _ in range(R)]
      Xs=list(base); Ys=list(base); Ys[d]*=W
      xs=[[1000*r+k for k in range(prod(Xs))] for r in range(W)]
      for tile in [1,2,5,64]:
        # all_gather: y on rank me
        yin=inner(Ys,d); xin=inner(Xs,d); y=[None]*prod(Ys)
        for r in range(W):
          for o in range(prod(Ys[:d])):
            for i in range(0,xin,tile):
              cnt=min(tile,xin-i); at=o*yin+r*xin+i
              y[at:at+cnt]=xs[r][o*xin+i:o*xin+i+cnt]
        for idx in itertools.product(*[range(v) for v in Ys]):
          r=idx[d]//Xs[d]; j=list(idx); j[d]-=r*Xs[d]
          assert y[flat(idx,Ys)]==xs[r][flat(j,Xs)]
        # reduce_scatter: x large (Ys), y small (Xs); rank me gets block me summed
        xl=[[random.randint(0,9) for k in range(prod(Ys))] for r in range(W)]
        for me in range(W):
          yv=[None]*prod(Xs); xin2=inner(Ys,d); yin2=inner(Xs,d)
          for o in range(prod(Xs[:d])):
            for i in range(0,yin2,tile):
              cnt=min(tile,yin2-i); src=o*xin2+me*yin2+i
              for k in range(cnt): yv[o*yin2+i+k]=sum(xl[r][src+k] for r in range(W))
          for idx in itertools.product(*[range(v) for v in Xs]):
            j=list(idx); j[d]+=me*Xs[d]
            assert yv[flat(idx,Xs)]==sum(xl[r][flat(j,Ys)] for r in range(W))
print("all_gather / reduce_scatter along dims: ok")
# two-shot shards cover [0, n) exactly once
for W in range(1,9):
  for per in [2,4,8,16]:
    for n in list(range(0,70))+[1000,1001,4097]:
      even=(n+W-1)//W; shard=(even+per-1)//per*per; cov=[0]*n
      for r in range(W):
        b=min(r*shard,n); l=min(b+shard,n)-b
        for k in range(b,b+l): cov[k]+=1
        assert b%per==0 or l==0
      assert all(v==1 for v in cov)
print("two-shot shards: ok")
