import socket, struct, sys, time
port=int(sys.argv[1]); d=open(sys.argv[2],'rb').read()
s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); i=0; n=0
while i+2<=len(d):
    l=struct.unpack('>H',d[i:i+2])[0]; s.sendto(d[i+2:i+2+l],('127.0.0.1',port)); i+=2+l; n+=1; time.sleep(0.002)
print(n,'sent')
