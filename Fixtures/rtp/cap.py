import socket, struct, sys
port=int(sys.argv[1]); out=sys.argv[2]
s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1',port)); s.settimeout(3)
pk=[]
try:
    while True:
        d,_=s.recvfrom(65535); pk.append(d)
except socket.timeout: pass
with open(out,'wb') as f:
    for d in pk: f.write(struct.pack('>H',len(d))+d)
print(len(pk),'packets')
